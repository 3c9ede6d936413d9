import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { row, rows } from '../common/database/sql';
import { openItemStatuses, openJobStatuses } from '../jobs/job-lifecycle';

/**
 * The worker's own SQL beside the job lifecycle (which owns every status change): where an upload's
 * bytes are, which open jobs look abandoned, and retention.
 */
@Injectable()
export class ProcessingRepository {
  constructor(private readonly db: DataSource) {}

  async storageKeyOfUpload(uploadId: string): Promise<{ storage_key: string; sha256: string } | null> {
    return row(this.db, `SELECT storage_key, sha256 FROM uploads WHERE id = $1 AND deleted_at IS NULL`, [uploadId]);
  }

  /** Whether the operator blocked content with this SHA-256 (checked on what the worker reads). */
  async isBlocked(sha256: string): Promise<boolean> {
    return (await row(this.db, `SELECT 1 FROM blocked_content WHERE sha256 = $1`, [sha256])) !== null;
  }

  /** The indexes of a job's items still to run (queued or processing); none once the job has ended. */
  async openItems(jobId: string): Promise<number[]> {
    const open = await rows<{ index: number }>(
      this.db,
      `SELECT i.index FROM job_items i JOIN jobs j ON j.id = i.job_id
        WHERE i.job_id = $1 AND j.status = ANY($2) AND i.status = ANY($3)
        ORDER BY i.index`,
      [jobId, openJobStatuses(), openItemStatuses()],
    );
    return open.map((item) => item.index);
  }

  /** Whose job it is and the account's plan now, for the fair share of its units (queues/fair-share.ts). */
  async jobOwner(jobId: string): Promise<{ account: string; plan: string } | undefined> {
    const owner = await rows<{ account: string; plan: string }>(
      this.db,
      `SELECT j.account_id AS account, a.plan_id AS plan FROM jobs j JOIN accounts a ON a.id = j.account_id WHERE j.id = $1`,
      [jobId],
    );
    return owner[0];
  }

  /**
   * One page of this region's open jobs nobody has touched for a while (candidates for re-enqueueing or
   * failing), with their open items, in id order after `afterId`. Filtered by region here, so another
   * region's stale jobs (a dead region's) can never fill the page.
   */
  staleOpenJobs(
    region: string,
    olderThanSeconds: number,
    limit: number,
    afterId = '',
  ): Promise<{ id: string; status: string; open_items: number[]; account: string; plan: string }[]> {
    return rows(
      this.db,
      `SELECT id, status, account_id AS account, (SELECT plan_id FROM accounts a WHERE a.id = jobs.account_id) AS plan,
              ARRAY(SELECT index FROM job_items i WHERE i.job_id = jobs.id AND i.status = ANY($6) ORDER BY index) AS open_items
         FROM jobs
        WHERE region = $1 AND status = ANY($5) AND id > $4
          AND COALESCE(heartbeat_at, created_at) < now() - make_interval(secs => $2)
        ORDER BY id LIMIT $3`,
      [region, olderThanSeconds, limit, afterId, openJobStatuses(), openItemStatuses()],
    );
  }

  // Retention, one batch per statement (src/processing/upkeep/retention-purge.ts drives the batches).
  // Each statement is its own transaction: it picks at most `limit` rows by an index on their expiry,
  // skipping rows another transaction holds (FOR UPDATE SKIP LOCKED: a job being ended, a second
  // worker's purge), so it neither waits on requests nor makes them wait on it.

  /** Marks up to `limit` assets past their expiry deleted (assets_expiry_idx); returns their storage keys. */
  async expireAssets(limit: number): Promise<string[]> {
    return this.expireStored('assets', limit);
  }

  /** Marks up to `limit` uploads past their expiry deleted (uploads_expiry_idx); returns their storage keys. */
  async expireUploads(limit: number): Promise<string[]> {
    return this.expireStored('uploads', limit);
  }

  private async expireStored(table: 'assets' | 'uploads', limit: number): Promise<string[]> {
    const expired = await rows<{ storage_key: string }>(
      this.db,
      `UPDATE ${table} SET deleted_at = now()
        WHERE id IN (SELECT id FROM ${table} WHERE deleted_at IS NULL AND expires_at <= now()
                      ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED)
        RETURNING storage_key`,
      [limit],
    );
    return expired.map((entry) => entry.storage_key);
  }

  /**
   * Deletes up to `limit` jobs that finished more than `retentionDays` ago (jobs_retention_idx), with
   * their items, segments and assets (ON DELETE CASCADE, each by an index on its job); returns how many.
   */
  async deleteExpiredJobs(retentionDays: number, limit: number): Promise<number> {
    const result: [unknown[], number] = await this.db.query(
      `DELETE FROM jobs
        WHERE id IN (SELECT id FROM jobs WHERE finished_at < now() - make_interval(days => $1)
                      ORDER BY finished_at LIMIT $2 FOR UPDATE SKIP LOCKED)`,
      [retentionDays, limit],
    );
    return result[1];
  }

  /** Deletes up to `limit` expired idempotency keys (idempotency_expiry_idx); returns how many. */
  async deleteExpiredIdempotencyKeys(limit: number): Promise<number> {
    const result: [unknown[], number] = await this.db.query(
      `DELETE FROM idempotency_keys
        WHERE (account_id, key) IN (SELECT account_id, key FROM idempotency_keys WHERE expires_at < now()
                                     ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED)`,
      [limit],
    );
    return result[1];
  }

  /**
   * Of these stored objects, the ones something still points at: a live asset or upload row, or an
   * open job (its worker may be between writing an output and ending the job). The sweeper removes the rest.
   */
  async objectsInUse(objects: { key: string; jobId: string | null }[]): Promise<Set<string>> {
    if (objects.length === 0) return new Set();
    // Three lookups of the batch's keys, each by an index (assets_live_key_idx, uploads_live_key_idx,
    // the jobs' primary key): never a read of a whole table or index, however many objects are live.
    const used = await rows<{ key: string }>(
      this.db,
      `SELECT a.storage_key AS key FROM assets a WHERE a.storage_key = ANY($1::text[]) AND a.deleted_at IS NULL
       UNION
       SELECT u.storage_key FROM uploads u WHERE u.storage_key = ANY($1::text[]) AND u.deleted_at IS NULL
       UNION
       SELECT k.key FROM unnest($1::text[], $2::text[]) AS k(key, job_id)
         JOIN jobs j ON j.id = k.job_id WHERE j.status = ANY($3)`,
      [objects.map((object) => object.key), objects.map((object) => object.jobId), openJobStatuses()],
    );
    return new Set(used.map((entry) => entry.key));
  }
}
