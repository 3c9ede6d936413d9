import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { pgTransaction, type PgTransaction, type Transaction } from '../common/database/pg-transaction';
import { row, rows } from '../common/database/sql';
import { TurnBatch } from '../common/database/turn-batch';
import { addToUsageDays, capturedCreditsSince, processingSecondsSince, usageDay, utcDay } from '../billing/usage-days';
import { openJobStatuses } from './job-lifecycle';
import {
  ITEM_COLUMNS,
  JOB_COLUMNS,
  JOB_JSON,
  jobFromJson,
  jobJsonOf,
  retainedJob,
  type ItemSource,
  type JobJson,
  type JobApi,
  type JobItemRow,
  type JobRow,
} from './job.types';
import type { OutputOptions } from './output-options';

export interface NewJobItem {
  source: ItemSource;
  durationSeconds: number;
  width: number | null;
  height: number | null;
  estimatedCredits: number;
}

export interface NewJob {
  id: string;
  accountId: string;
  api: JobApi;
  region: string;
  /** Resolved (every default filled in): see output-options.ts. */
  outputOptions: OutputOptions;
  metadata: Record<string, string>;
  estimatedCredits: number;
  estimatedSeconds: number;
  requestId: string;
  items: NewJobItem[];
}

interface JobKey {
  accountId: string;
  jobId: string;
  retentionDays: number;
}
type FoundJob = { job: JobRow; items: JobItemRow[] };

@Injectable()
export class JobsRepository {
  /** The job reads of one event-loop turn, answered by one query (findForAccount). */
  private readonly reads = new TurnBatch<JobKey, FoundJob | null>((keys) => this.find(keys, this.db));

  constructor(private readonly db: DataSource) {}

  /** The submit's and the estimate's transaction, on the driver directly (pg-transaction.ts). */
  transaction<T>(work: (tx: PgTransaction) => Promise<T>): Promise<T> {
    return pgTransaction(this.db, work);
  }

  /** For the metrics: credit holds still open (open jobs, jobs_open_idx) and the age of the oldest. */
  async openHolds(): Promise<{ open: number; oldestSeconds: number }> {
    const found = await row<{ open: number; oldest: number | null }>(
      this.db,
      `SELECT count(*)::int AS open, EXTRACT(EPOCH FROM now() - min(created_at))::float8 AS oldest
         FROM jobs WHERE status = ANY($1) AND billing_state = 'authorised'`,
      [openJobStatuses()],
    );
    return { open: found?.open ?? 0, oldestSeconds: Math.max(0, found?.oldest ?? 0) };
  }

  /**
   * Inserts the job and its items and returns them as a read would (findForAccount), in one statement:
   * the rows come back from the inserts themselves (RETURNING), so the submit's view costs no read.
   * The same statement adds the job's estimated seconds to its day's usage (src/billing/usage-days.ts;
   * the submit holds the account's lock).
   */
  async insert(manager: Transaction, job: NewJob): Promise<FoundJob> {
    const values: unknown[] = [
      job.id,
      job.accountId,
      job.api,
      job.region,
      job.outputOptions,
      job.metadata,
      job.estimatedCredits,
      job.estimatedSeconds,
      job.requestId,
    ];
    const tuples = job.items.map((item, index) => {
      const base = values.length;
      values.push(index, item.source, item.durationSeconds, item.width, item.height, item.estimatedCredits);
      return `($1, $${base + 1}, 'queued', $${base + 2}, $${base + 3}, $${base + 4}, $${base + 5}, $${base + 6})`;
    });
    const inserted = await row<{ job: JobJson }>(
      manager,
      `WITH job AS (
         INSERT INTO jobs (id, account_id, api, status, region, output_options, metadata, estimated_credits, estimated_seconds, request_id)
         VALUES ($1, $2, $3, 'queued', $4, $5, $6, $7, $8, $9) RETURNING *
       ), items AS (
         INSERT INTO job_items (job_id, index, status, source, duration_seconds, width, height, estimated_credits)
         VALUES ${tuples.join(', ')} RETURNING *
       ), usage AS (
         ${addToUsageDays('processing_seconds', `SELECT account_id, ${utcDay('created_at')}, estimated_seconds FROM job`)}
       )
       SELECT ${jobJsonOf('job', 'items')} AS job FROM job`,
      values,
      // One text per number of items.
      { prepared: `job-insert-${job.items.length}` },
    );
    return jobFromJson(inserted!.job);
  }

  /**
   * The job as its owner sees it, with its items; null when there is none, it is past retention, or it
   * is another account's (which does not exist for the caller). Outside a
   * transaction the reads of one event-loop turn share one query (TurnBatch); each is matched on its
   * account and job id together, so a read never sees another account's job.
   */
  async findForAccount(
    accountId: string,
    jobId: string,
    retentionDays: number,
    manager?: EntityManager,
  ): Promise<FoundJob | null> {
    const key = { accountId, jobId, retentionDays };
    if (manager) return (await this.find([key], manager))[0];
    return this.reads.load(key);
  }

  /**
   * One statement for one key or a turn's batch (one prepared plan): each key is matched on its account
   * and job id together, and the answers come back in the keys' order.
   */
  private async find(keys: JobKey[], db: DataSource | EntityManager): Promise<(FoundJob | null)[]> {
    const found = await rows<{ job: JobJson }>(
      db,
      `SELECT ${JOB_JSON} AS job
         FROM unnest($1::text[], $2::text[], $3::int[]) AS wanted(id, account_id, days)
         JOIN jobs ON jobs.id = wanted.id AND jobs.account_id = wanted.account_id
        WHERE ${retainedJob('wanted.days')}`,
      [keys.map((key) => key.jobId), keys.map((key) => key.accountId), keys.map((key) => key.retentionDays)],
      { prepared: 'jobs-for-accounts' },
    );
    const byKey = new Map(found.map(({ job }) => [`${job.account_id} ${job.id}`, job]));
    return keys.map((key) => {
      const job = byKey.get(`${key.accountId} ${key.jobId}`);
      return job ? jobFromJson(job) : null;
    });
  }

  async list(
    accountId: string,
    api: JobApi,
    options: { limit: number; startingAfter?: string; status?: string; retentionDays: number },
  ): Promise<{ job: JobRow; items: JobItemRow[] }[]> {
    const jobs = await rows<JobRow>(
      this.db,
      `SELECT ${JOB_COLUMNS} FROM jobs
        WHERE account_id = $1 AND api = $2 AND ($3::text IS NULL OR id < $3) AND ($4::text IS NULL OR status = $4)
          AND ${retainedJob('$5')}
        ORDER BY id DESC LIMIT $6`,
      [accountId, api, options.startingAfter ?? null, options.status ?? null, options.retentionDays, options.limit],
    );
    if (!jobs.length) return [];
    const items = await rows<JobItemRow>(
      this.db,
      `SELECT ${ITEM_COLUMNS} FROM job_items WHERE job_id = ANY($1) ORDER BY job_id, index`,
      [jobs.map((job) => job.id)],
    );
    return jobs.map((job) => ({ job, items: items.filter((item) => item.job_id === job.id) }));
  }

  /**
   * Processing seconds since `since` (a UTC day's start) of the jobs created since: finished jobs'
   * processed time plus the estimates still open (account_usage_days).
   */
  async secondsUsedSince(
    accountId: string,
    since: Date,
    manager: EntityManager | DataSource = this.db,
  ): Promise<number> {
    const result = await row<{ seconds: string }>(manager, `SELECT ${processingSecondsSince('$1', '$2')} AS seconds`, [
      accountId,
      usageDay(since),
    ]);
    return Number(result?.seconds ?? 0);
  }

  /**
   * What step 8's checks compare (src/jobs/limits.ts) beside the locked account row (which carries
   * its open jobs), in one statement: the account's processing seconds this period (only with
   * `quota`), its captured credits this period (only with `spendCap`) and the region's queued jobs.
   * Read under the account's lock, in a statement of its own after it: a statement's snapshot is
   * taken when it starts, so these then include the seconds and captures every submit and settlement
   * before it added to account_usage_days (each writes them holding the same lock). `since` is a UTC
   * day's start (the billing period's).
   */
  async limitUsage(
    manager: Transaction,
    look: {
      accountId: string;
      region: string;
      since: Date;
      quota: boolean;
      spendCap: boolean;
      /** MAX_QUEUE_DEPTH: the queued jobs are counted up to it, which is all the check needs to know. */
      queueDepthLimit: number;
    },
  ): Promise<{ secondsUsed: number; capturedCredits: number; queued: number }> {
    const found = await row<{ seconds: string | null; captured: string | null; queued: string }>(
      manager,
      `SELECT CASE WHEN $4::boolean THEN ${processingSecondsSince('$1', '$3')} END AS seconds,
              CASE WHEN $5::boolean THEN ${capturedCreditsSince('$1', '$3')} END AS captured,
              ${queuedJobs('$2', '$6')} AS queued`,
      [look.accountId, look.region, usageDay(look.since), look.quota, look.spendCap, look.queueDepthLimit],
      { prepared: 'job-limit-usage' },
    );
    return {
      secondsUsed: Number(found?.seconds ?? 0),
      capturedCredits: Number(found?.captured ?? 0),
      queued: Number(found?.queued ?? 0),
    };
  }
}

/**
 * Jobs waiting in a region's queue (each region has its own queue and workers), counted up to `limit`:
 * a submit only asks whether the queue is full, and an uncapped count read every queued job of the
 * region on every submit — its cost grew with the backlog (bench/profile-submits: PostgreSQL's CPU per
 * submit climbed from ~2.5 to ~10 ms over one bench run).
 */
const queuedJobs = (region: string, limit: string): string =>
  `(SELECT count(*) FROM (SELECT 1 FROM jobs WHERE status = 'queued' AND region = ${region} LIMIT ${limit}::int) queued)`;
