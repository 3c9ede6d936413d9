import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import type { Pool, PoolClient } from 'pg';
import { DataSource, type EntityManager } from 'typeorm';
import type { HoldSettlement } from '../billing/holds.repository';
import { addToUsageDays, utcDay } from '../billing/usage-days';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { createAsyncCommitPool } from '../common/database/async-commit-pool';
import { ASYNC_BEGIN } from '../common/database/pool-mode';
import { row, rows } from '../common/database/sql';
import type { ErrorObject } from '../common/errors';
import { newId } from '../common/ids';
import {
  ITEM_COLUMNS,
  ITEMS_JSON,
  JOB_COLUMNS,
  type BillingState,
  type ItemCheck,
  type ItemOutput,
  type ItemPhase,
  type ItemStatus,
  type JobItemRow,
  type JobRow,
  type JobStatus,
} from './job.types';

/**
 * A job's overall progress: the mean of its items' progress weighted by their duration (an ended
 * item counts as done), never going back, and below 1 until the job has ended. `open` is the
 * parameter holding the open item statuses.
 */
const jobProgress = (open: string) => `progress = GREATEST(progress, LEAST(0.999, (
    SELECT round((COALESCE(sum(i.duration_seconds * p.value) / NULLIF(sum(i.duration_seconds), 0), avg(p.value)))::numeric, 3)
      FROM job_items i, LATERAL (SELECT CASE WHEN i.status = ANY(${open}) THEN i.progress ELSE 1 END AS value) p
     WHERE i.job_id = jobs.id)))`;

/** An ending job's processing seconds, before (its estimate) and after (as processed); numeric as text, exact. */
export interface EndedSeconds {
  accountId: string;
  createdAt: Date;
  estimated: string;
  processed: string;
}

/** takeItem's way to roll back when the job is open but the item has ended. */
class ItemNotOpen extends Error {}

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
  /** The output's light map (sdr2hdr), stored beside it: an asset of its own, expiring with it. */
  lightMap?: { storageKey: string; sizeBytes: number; frameSeconds?: number | null } | null;
}

/**
 * The SQL of the job lifecycle, and nothing else writes a job's or an item's status. Every UPDATE
 * takes the statuses it may move from (`from`) as a parameter: the lifecycle passes them from its
 * transition tables. Marks a crash may undo
 * (taken, progress, item taken) commit asynchronously: the item is simply taken again. Endings,
 * which move money, commit synchronously.
 *
 * Lock order: every transaction that writes both a job and its items locks the job row first, so two
 * of them never wait on each other in a cycle.
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
      `UPDATE jobs SET status = 'processing', started_at = COALESCE(started_at, now()), heartbeat_at = now()
        WHERE id = $1 AND status = ANY($2)
        RETURNING ${JOB_COLUMNS}, ${ITEMS_JSON} AS items`,
      [jobId, from],
    );
    if (!claimed[0]) return null;
    const { items, ...job } = claimed[0];
    return { job, items };
  }

  /** The job row first (lock order), then the item; both or neither. `attempts` counts takes. */
  async takeItem(
    jobId: string,
    index: number,
    worker: string,
    from: { job: JobStatus[]; item: ItemStatus[] },
  ): Promise<{ job: JobRow & { plan: string }; item: JobItemRow } | null> {
    const taken = this.marksTransaction(async (client) => {
      // The account's plan comes along for the queue wait metric (by plan: metrics/job-metrics.ts).
      const { rows: jobs } = await client.query<JobRow & { plan: string }>(
        `UPDATE jobs SET status = 'processing', started_at = COALESCE(started_at, now()), attempts = attempts + 1, heartbeat_at = now()
          WHERE id = $1 AND status = ANY($2)
          RETURNING ${JOB_COLUMNS}, (SELECT plan_id FROM accounts a WHERE a.id = jobs.account_id) AS plan`,
        [jobId, from.job],
      );
      if (!jobs[0]) return null;
      const { rows: items } = await client.query<JobItemRow>(
        `UPDATE job_items SET status = 'processing', worker = $3, attempts = attempts + 1, progress = 0, phase = 'encoding'
          WHERE job_id = $1 AND index = $2 AND status = ANY($4) RETURNING ${ITEM_COLUMNS}`,
        [jobId, index, worker, from.item],
      );
      // The job is open but the item ended (a duplicated unit): undo the job's mark too.
      if (!items[0]) throw new ItemNotOpen();
      return { job: jobs[0], item: items[0] };
    });
    return taken.catch((error: unknown) => {
      if (error instanceof ItemNotOpen) return null;
      throw error;
    });
  }

  /** An item's progress and the job's liveness and overall progress; false once the job is not processing. */
  async progress(jobId: string, index: number, fraction: number, open: ItemStatus[]): Promise<boolean> {
    return this.marksTransaction(async (client) => {
      const { rows: processing } = await client.query(
        `SELECT 1 FROM jobs WHERE id = $1 AND status = 'processing' FOR UPDATE`,
        [jobId],
      );
      if (!processing[0]) return false;
      await client.query(
        `UPDATE job_items SET progress = GREATEST(progress, $3) WHERE job_id = $1 AND index = $2 AND status = 'processing'`,
        [jobId, index, fraction],
      );
      await client.query(`UPDATE jobs SET ${jobProgress('$2')}, heartbeat_at = now() WHERE id = $1`, [jobId, open]);
      return true;
    });
  }

  /** What a processing item is doing now; a no-op once it is no longer processing. */
  async phase(jobId: string, index: number, phase: ItemPhase): Promise<void> {
    // A mark (async commit): one lost to a crash only shows the previous phase until the next.
    await this.marks.query(
      `UPDATE job_items SET phase = $3 WHERE job_id = $1 AND index = $2 AND status = 'processing'`,
      [jobId, index, phase],
    );
  }

  /** The job's overall progress after one of its items ended (the job row is locked by the caller). */
  async updateProgress(manager: EntityManager, jobId: string, open: ItemStatus[]): Promise<void> {
    await manager.query(`UPDATE jobs SET ${jobProgress('$2')}, heartbeat_at = now() WHERE id = $1`, [jobId, open]);
  }

  /** Every item of a job with what it ended with (open items too), read under the job's lock. */
  async itemEndings(
    manager: EntityManager,
    jobId: string,
  ): Promise<
    {
      index: number;
      status: ItemStatus;
      estimatedCredits: number;
      chargedCredits: number;
      processedSeconds: number;
      error: ErrorObject | null;
      output: ItemOutput | null;
      checks: ItemCheck[];
    }[]
  > {
    const items = await rows<{
      index: number;
      status: ItemStatus;
      estimated_credits: string;
      charged_credits: string;
      processed_seconds: string;
      error: ErrorObject | null;
      output: ItemOutput | null;
      checks: ItemCheck[];
    }>(
      manager,
      `SELECT index, status, estimated_credits, charged_credits, processed_seconds, error, output, checks
         FROM job_items WHERE job_id = $1 ORDER BY index`,
      [jobId],
    );
    return items.map((item) => ({
      index: item.index,
      status: item.status,
      estimatedCredits: Number(item.estimated_credits),
      chargedCredits: Number(item.charged_credits),
      processedSeconds: Number(item.processed_seconds),
      error: item.error,
      output: item.output,
      checks: item.checks ?? [],
    }));
  }

  /** BEGIN … COMMIT on the marks pool; an error rolls back and is thrown on. */
  private async marksTransaction<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    const client = await this.marks.connect();
    let broken: unknown;
    // pg-pool listens for 'error' only on idle clients: a connection dropped while checked out (a
    // PostgreSQL restart) would otherwise emit an unhandled 'error' and end the process. The running
    // query fails with the same error, so remembering it here is all the listener has to do.
    const onError = (error: Error) => (broken = error);
    client.on('error', onError);
    try {
      await client.query(ASYNC_BEGIN);
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      // A connection that cannot even roll back is dropped from the pool (release with the error).
      await client.query('ROLLBACK').catch((rollbackError: unknown) => (broken = rollbackError));
      throw error;
    } finally {
      client.off('error', onError);
      client.release(broken instanceof Error ? broken : undefined);
    }
  }

  lock(manager: EntityManager, jobId: string): Promise<JobRow | null> {
    return row<JobRow>(manager, `SELECT ${JOB_COLUMNS} FROM jobs WHERE id = $1 FOR UPDATE`, [jobId]);
  }

  /**
   * The ending's status change, guarded twice: the job must still hold its credits ('authorised')
   * and be in a status that leads to the new one. Returns the hold to settle and what the ending
   * changes in the job's processing seconds; null when another transaction ended the job first. A job
   * that succeeded (fully or partly) shows progress 1. Called only by JobLifecycle's endJob.
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
  ): Promise<(HoldSettlement & { seconds: EndedSeconds }) | null> {
    const ended = await row<{
      account_id: string;
      estimated_credits: string;
      charged_credits: string;
      created_at: Date;
      estimated_seconds: string;
      processed_seconds: string;
    }>(
      manager,
      `UPDATE jobs SET status = $2, billing_state = $3, charged_credits = LEAST($4::bigint, estimated_credits),
              error = $5, processed_seconds = COALESCE($6, processed_seconds), finished_at = now(),
              progress = CASE WHEN $2 IN ('succeeded', 'partially_succeeded') THEN 1 ELSE progress END
        WHERE id = $1 AND billing_state = 'authorised' AND status = ANY($7)
        RETURNING account_id, estimated_credits, charged_credits, created_at,
                  estimated_seconds::text AS estimated_seconds, processed_seconds::text AS processed_seconds`,
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
      seconds: {
        accountId: ended.account_id,
        createdAt: ended.created_at,
        estimated: ended.estimated_seconds,
        processed: ended.processed_seconds,
      },
    };
  }

  /**
   * An ended job's processing seconds in its account's usage: the submit counted its estimate on the
   * day the job was created; from now on its processed time counts there instead (src/billing/usage-days.ts).
   * Once per ending, holding the account's row lock (after the hold's settlement).
   */
  async addEndedSeconds(manager: EntityManager, seconds: EndedSeconds): Promise<void> {
    await manager.query(
      addToUsageDays('processing_seconds', `SELECT $1::text, ${utcDay('$2::timestamptz')}, $4::numeric - $3::numeric`),
      [seconds.accountId, seconds.createdAt, seconds.estimated, seconds.processed],
    );
  }

  /** An item's end; false when it had ended already (a duplicated or retried unit). */
  async endItem(
    manager: EntityManager,
    jobId: string,
    item: {
      index: number;
      status: ItemStatus;
      from: ItemStatus[];
      chargedCredits: number;
      processedSeconds: number;
      error: ErrorObject | null;
      checks?: ItemCheck[];
    },
  ): Promise<boolean> {
    const ended = await row(
      manager,
      `UPDATE job_items SET status = $3, charged_credits = $4, processed_seconds = $5, error = $6,
              checks = COALESCE($8::jsonb, checks)
        WHERE job_id = $1 AND index = $2 AND status = ANY($7) RETURNING 1`,
      [
        jobId,
        item.index,
        item.status,
        item.chargedCredits,
        item.processedSeconds,
        item.error,
        item.from,
        item.checks ? JSON.stringify(item.checks) : null,
      ],
    );
    return ended !== null;
  }

  async setItemOutput(manager: EntityManager, jobId: string, index: number, output: ItemOutput): Promise<void> {
    await manager.query(`UPDATE job_items SET output = $3 WHERE job_id = $1 AND index = $2`, [jobId, index, output]);
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
