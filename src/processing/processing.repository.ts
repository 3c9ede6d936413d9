import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import type { Pool } from 'pg';
import { DataSource, type EntityManager } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { createAsyncCommitPool } from '../common/database/async-commit-pool';
import { row, rows } from '../common/database/sql';
import { ITEMS_JSON, JOB_COLUMNS, type ItemOutput, type JobItemRow, type JobRow } from '../jobs/job.types';

/**
 * All SQL of the worker side: claiming jobs, progress, item results, reconciliation. Marks a crash
 * may undo (processing, progress, item started) go through an asynchronous-commit pool; the job
 * is simply taken again. Settlement and everything with money commit synchronously.
 */
@Injectable()
export class ProcessingRepository implements OnApplicationShutdown {
  private readonly marks: Pool;

  constructor(
    private readonly db: DataSource,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.marks = createAsyncCommitPool(config);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.marks.end();
  }

  transaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  /**
   * Moves a job to processing (again, after a crash) and returns it with its items; null when it
   * already ended (e.g. cancelled).
   */
  async claim(jobId: string): Promise<{ job: JobRow; items: JobItemRow[] } | null> {
    const { rows: claimed } = await this.marks.query<JobRow & { items: JobItemRow[] }>(
      `UPDATE jobs SET status = 'processing', started_at = COALESCE(started_at, now()), attempts = attempts + 1, heartbeat_at = now()
        WHERE id = $1 AND status IN ('queued', 'processing')
        RETURNING ${JOB_COLUMNS}, ${ITEMS_JSON} AS items`,
      [jobId],
    );
    if (!claimed[0]) return null;
    const { items, ...job } = claimed[0];
    return { job, items };
  }

  async storageKeyOfUpload(uploadId: string): Promise<{ storage_key: string; sha256: string } | null> {
    return row(this.db, `SELECT storage_key, sha256 FROM uploads WHERE id = $1 AND deleted_at IS NULL`, [uploadId]);
  }

  /** Progress and liveness; false once the job is no longer processing (cancelled meanwhile). */
  async progress(jobId: string, progress: number): Promise<boolean> {
    const { rows: updated } = await this.marks.query(
      `UPDATE jobs SET progress = GREATEST(progress, $2), heartbeat_at = now() WHERE id = $1 AND status = 'processing' RETURNING 1`,
      [jobId, progress],
    );
    return updated.length > 0;
  }

  async itemStarted(jobId: string, index: number): Promise<void> {
    await this.marks.query(
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
