import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import type { Pool } from 'pg';
import { DataSource, type EntityManager } from 'typeorm';
import type { HoldSettlement } from '../billing/holds';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { createAsyncCommitPool } from '../common/database/async-commit-pool';
import { row } from '../common/database/sql';
import type { ErrorObject } from '../common/errors';
import { newId } from '../common/ids';
import {
  ITEMS_JSON,
  JOB_COLUMNS,
  type BillingState,
  type ItemOutput,
  type ItemStatus,
  type JobItemRow,
  type JobRow,
  type JobStatus,
} from './job.types';

export interface NewAsset {
  accountId: string;
  jobId: string;
  index: number;
  storageKey: string;
  sizeBytes: number;
  container: string;
  contentType: string;
  media: Record<string, unknown>;
  retentionDays: number;
}

/**
 * The SQL of the job lifecycle, and nothing else writes a job's or an item's status. Every UPDATE
 * takes the statuses it may move from (`from`) as a parameter: the lifecycle passes them from its
 * transition tables. Marks a crash may undo
 * (taken, progress, item started) commit asynchronously: the job is simply taken again. Endings,
 * which move money, commit synchronously.
 */
@Injectable()
export class JobLifecycleRepository implements OnApplicationShutdown {
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

  async claim(jobId: string, from: JobStatus[]): Promise<{ job: JobRow; items: JobItemRow[] } | null> {
    const { rows: claimed } = await this.marks.query<JobRow & { items: JobItemRow[] }>(
      `UPDATE jobs SET status = 'processing', started_at = COALESCE(started_at, now()), attempts = attempts + 1, heartbeat_at = now()
        WHERE id = $1 AND status = ANY($2)
        RETURNING ${JOB_COLUMNS}, ${ITEMS_JSON} AS items`,
      [jobId, from],
    );
    if (!claimed[0]) return null;
    const { items, ...job } = claimed[0];
    return { job, items };
  }

  async itemStarted(jobId: string, index: number, from: ItemStatus[]): Promise<void> {
    await this.marks.query(
      `UPDATE job_items SET status = 'processing' WHERE job_id = $1 AND index = $2 AND status = ANY($3)`,
      [jobId, index, from],
    );
  }

  async progress(jobId: string, progress: number): Promise<boolean> {
    const { rows: updated } = await this.marks.query(
      `UPDATE jobs SET progress = GREATEST(progress, $2), heartbeat_at = now() WHERE id = $1 AND status = 'processing' RETURNING 1`,
      [jobId, progress],
    );
    return updated.length > 0;
  }

  lock(manager: EntityManager, jobId: string): Promise<JobRow | null> {
    return row<JobRow>(manager, `SELECT ${JOB_COLUMNS} FROM jobs WHERE id = $1 FOR UPDATE`, [jobId]);
  }

  /**
   * The ending's status change, guarded twice: the job must still hold its credits ('authorised')
   * and be in a status that leads to the new one. Returns the hold to settle; null when another
   * transaction ended the job first. A job that succeeded (fully or partly) shows progress 1.
   */
  async endJob(
    manager: EntityManager,
    jobId: string,
    ending: {
      status: JobStatus;
      from: JobStatus[];
      billingState: BillingState;
      chargedCredits: number;
      processedSeconds: number | null;
      error: ErrorObject | null;
    },
  ): Promise<HoldSettlement | null> {
    const ended = await row<{ account_id: string; estimated_credits: string; charged_credits: string }>(
      manager,
      `UPDATE jobs SET status = $2, billing_state = $3, charged_credits = LEAST($4::bigint, estimated_credits),
              error = $5, processed_seconds = COALESCE($6, processed_seconds), finished_at = now(),
              progress = CASE WHEN $2 IN ('succeeded', 'partially_succeeded') THEN 1 ELSE progress END
        WHERE id = $1 AND billing_state = 'authorised' AND status = ANY($7)
        RETURNING account_id, estimated_credits, charged_credits`,
      [
        jobId,
        ending.status,
        ending.billingState,
        ending.chargedCredits,
        ending.error,
        ending.processedSeconds,
        ending.from,
      ],
    );
    if (!ended) return null;
    return {
      accountId: ended.account_id,
      jobId,
      heldCredits: Number(ended.estimated_credits),
      chargedCredits: Number(ended.charged_credits),
    };
  }

  async endItem(
    manager: EntityManager,
    jobId: string,
    item: {
      index: number;
      status: ItemStatus;
      from: ItemStatus[];
      chargedCredits: number;
      processedSeconds: number;
      output: ItemOutput | null;
      error: ErrorObject | null;
    },
  ): Promise<void> {
    await manager.query(
      `UPDATE job_items SET status = $3, charged_credits = $4, processed_seconds = $5, output = $6, error = $7
        WHERE job_id = $1 AND index = $2 AND status = ANY($8)`,
      [jobId, item.index, item.status, item.chargedCredits, item.processedSeconds, item.output, item.error, item.from],
    );
  }

  async cancelItems(manager: EntityManager, jobId: string, from: ItemStatus[]): Promise<void> {
    await manager.query(`UPDATE job_items SET status = 'cancelled' WHERE job_id = $1 AND status = ANY($2)`, [
      jobId,
      from,
    ]);
  }

  /** Stores an item's output; returns the asset's id. */
  async insertAsset(manager: EntityManager, asset: NewAsset): Promise<string> {
    const id = newId('ast');
    await manager.query(
      `INSERT INTO assets (id, account_id, job_id, item_index, storage_key, size_bytes, container, content_type, media, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, now() + make_interval(days => $10))`,
      [
        id,
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
    return id;
  }
}
