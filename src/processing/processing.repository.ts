import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { row, rows } from '../common/database/sql';
import { ITEM_COLUMNS, JOB_COLUMNS, type ItemOutput, type JobItemRow, type JobRow } from '../jobs/job.types';

/** All SQL of the worker side: claiming jobs, progress, item results, reconciliation. */
@Injectable()
export class ProcessingRepository {
  constructor(private readonly db: DataSource) {}

  transaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  /** Moves a job to processing (again, after a crash); null when it already ended (e.g. cancelled). */
  claim(jobId: string): Promise<JobRow | null> {
    return row<JobRow>(
      this.db,
      `UPDATE jobs SET status = 'processing', started_at = COALESCE(started_at, now()), attempts = attempts + 1, heartbeat_at = now()
        WHERE id = $1 AND status IN ('queued', 'processing')
        RETURNING ${JOB_COLUMNS}`,
      [jobId],
    );
  }

  items(jobId: string): Promise<JobItemRow[]> {
    return rows<JobItemRow>(this.db, `SELECT ${ITEM_COLUMNS} FROM job_items WHERE job_id = $1 ORDER BY index`, [jobId]);
  }

  async storageKeyOfUpload(uploadId: string): Promise<{ storage_key: string; sha256: string } | null> {
    return row(this.db, `SELECT storage_key, sha256 FROM uploads WHERE id = $1 AND deleted_at IS NULL`, [uploadId]);
  }

  /** Progress and liveness; false once the job is no longer processing (cancelled meanwhile). */
  async progress(jobId: string, progress: number): Promise<boolean> {
    const updated = await row(
      this.db,
      `UPDATE jobs SET progress = GREATEST(progress, $2), heartbeat_at = now() WHERE id = $1 AND status = 'processing' RETURNING 1`,
      [jobId, progress],
    );
    return updated !== null;
  }

  async itemStarted(jobId: string, index: number): Promise<void> {
    await this.db.query(
      `UPDATE job_items SET status = 'processing' WHERE job_id = $1 AND index = $2 AND status = 'queued'`,
      [jobId, index],
    );
  }

  /** Open jobs nobody has touched for a while: candidates for re-enqueueing or failing. */
  staleOpenJobs(olderThanSeconds: number, limit: number): Promise<{ id: string; region: string; status: string }[]> {
    return rows(
      this.db,
      `SELECT id, region, status FROM jobs
        WHERE status IN ('queued', 'processing') AND COALESCE(heartbeat_at, created_at) < now() - make_interval(secs => $1)
        ORDER BY created_at LIMIT $2`,
      [olderThanSeconds, limit],
    );
  }

  async insertAsset(
    manager: EntityManager,
    asset: {
      id: string;
      accountId: string;
      jobId: string;
      index: number;
      storageKey: string;
      sizeBytes: number;
      container: string;
      contentType: string;
      media: Record<string, unknown>;
      retentionDays: number;
    },
  ): Promise<void> {
    await manager.query(
      `INSERT INTO assets (id, account_id, job_id, item_index, storage_key, size_bytes, container, content_type, media, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, now() + make_interval(days => $10))`,
      [
        asset.id,
        asset.accountId,
        asset.jobId,
        asset.index,
        asset.storageKey,
        asset.sizeBytes,
        asset.container,
        asset.contentType,
        asset.media,
        asset.retentionDays,
      ],
    );
  }

  async finishItem(
    manager: EntityManager,
    item: {
      jobId: string;
      index: number;
      status: 'succeeded' | 'failed';
      chargedCredits: number;
      processedSeconds: number;
      output: ItemOutput | null;
      error: unknown;
    },
  ): Promise<void> {
    await manager.query(
      `UPDATE job_items SET status = $3, charged_credits = $4, processed_seconds = $5, output = $6, error = $7 WHERE job_id = $1 AND index = $2`,
      [item.jobId, item.index, item.status, item.chargedCredits, item.processedSeconds, item.output, item.error],
    );
  }

  /** Retention: jobs and assets past their time are deleted; returns the storage keys to remove. */
  async purgeExpired(retentionDays: number): Promise<string[]> {
    const assets = await rows<{ storage_key: string }>(
      this.db,
      `UPDATE assets SET deleted_at = now() WHERE deleted_at IS NULL AND expires_at <= now() RETURNING storage_key`,
    );
    const uploads = await rows<{ storage_key: string }>(
      this.db,
      `UPDATE uploads SET deleted_at = now() WHERE deleted_at IS NULL AND expires_at <= now() RETURNING storage_key`,
    );
    await this.db.query(`DELETE FROM jobs WHERE finished_at < now() - make_interval(days => $1)`, [retentionDays]);
    await this.db.query(`DELETE FROM idempotency_keys WHERE expires_at < now()`);
    return [...assets, ...uploads].map((entry) => entry.storage_key);
  }
}
