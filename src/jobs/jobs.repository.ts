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
import type { OutputSpec } from '../media/output-spec';

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
  /** What the worker makes of them (outputSpec). */
  outputSpec: OutputSpec;
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
   * For the metrics: items still waiting for a worker (queued, in an open job: jobs_open_idx), by region
   * and the account's plan — the fair share's effect per plan, with labels bounded by the plans.
   */
  waitingItemsByPlan(): Promise<{ region: string; plan: string; items: number; oldestSeconds: number }[]> {
    return rows(
      this.db,
      `SELECT j.region, a.plan_id AS plan, count(*)::int AS items,
              GREATEST(0, EXTRACT(EPOCH FROM now() - min(j.created_at)))::float8 AS "oldestSeconds"
         FROM jobs j JOIN job_items i ON i.job_id = j.id JOIN accounts a ON a.id = j.account_id
        WHERE j.status = ANY($1) AND i.status = 'queued'
        GROUP BY j.region, a.plan_id`,
      [openJobStatuses()],
    );
  }

  /**
   * Inserts the jobs and their items and returns them as a read would (findForAccount), in one statement
   * for all of them (a submit's job, or those of the submits of one event-loop turn: job-admission.ts):
   * the rows come back from the inserts themselves (RETURNING), so the submit's view costs no read. The
   * same statement adds each job's estimated seconds to its day's usage (src/billing/usage-days.ts; the
   * submit holds the accounts' locks). The columns go as arrays, so one text serves any number of jobs
   * and items, parsed once per connection.
   */
  async insert(manager: Transaction, jobs: NewJob[]): Promise<FoundJob[]> {
    const items = jobs.flatMap((job) => job.items.map((item, index) => ({ jobId: job.id, index, ...item })));
    const inserted = await rows<{ job: JobJson }>(
      manager,
      `WITH job AS (
         INSERT INTO jobs (id, account_id, api, status, region, output_options, output_spec, metadata, estimated_credits, estimated_seconds, request_id)
         SELECT id, account_id, api, 'queued', region, output_options, output_spec, metadata, estimated_credits, estimated_seconds, request_id
           FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::jsonb[], $6::jsonb[], $7::jsonb[], $8::bigint[], $9::numeric[], $10::text[])
             AS new(id, account_id, api, region, output_options, output_spec, metadata, estimated_credits, estimated_seconds, request_id)
         RETURNING *
       ), items AS (
         INSERT INTO job_items (job_id, index, status, source, duration_seconds, width, height, estimated_credits)
         SELECT job_id, index, 'queued', source, duration_seconds, width, height, estimated_credits
           FROM unnest($11::text[], $12::int[], $13::jsonb[], $14::numeric[], $15::int[], $16::int[], $17::bigint[])
             AS new(job_id, index, source, duration_seconds, width, height, estimated_credits)
         RETURNING *
       ), usage AS (
         ${addToUsageDays(
           'processing_seconds',
           `SELECT account_id, ${utcDay('created_at')}, sum(estimated_seconds) FROM job GROUP BY 1, 2`,
         )}
       )
       SELECT ${jobJsonOf('job', 'items')} AS job FROM job`,
      [
        jobs.map((job) => job.id),
        jobs.map((job) => job.accountId),
        jobs.map((job) => job.api),
        jobs.map((job) => job.region),
        jobs.map((job) => JSON.stringify(job.outputOptions)),
        jobs.map((job) => JSON.stringify(job.outputSpec)),
        jobs.map((job) => JSON.stringify(job.metadata)),
        jobs.map((job) => job.estimatedCredits),
        jobs.map((job) => job.estimatedSeconds),
        jobs.map((job) => job.requestId),
        items.map((item) => item.jobId),
        items.map((item) => item.index),
        items.map((item) => JSON.stringify(item.source)),
        items.map((item) => item.durationSeconds),
        items.map((item) => item.width),
        items.map((item) => item.height),
        items.map((item) => item.estimatedCredits),
      ],
      { prepared: 'jobs-insert' },
    );
    const byId = new Map(inserted.map(({ job }) => [job.id, job]));
    return jobs.map((job) => jobFromJson(byId.get(job.id)!));
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
   * its open jobs), in one statement for the looks of one transaction: each account's processing
   * seconds this period (only with `quota`), its captured credits this period (only with `spendCap`)
   * and each region's queued jobs (counted once per region). Read under the accounts' locks, in a
   * statement of its own after them: a statement's snapshot is taken when it starts, so these then
   * include the seconds and captures every submit and settlement before it added to
   * account_usage_days (each writes them holding the same lock). `since` is a UTC day's start (the
   * billing period's). The answers come in the looks' order.
   */
  async limitUsage(
    manager: Transaction,
    looks: {
      accountId: string;
      region: string;
      since: Date;
      quota: boolean;
      spendCap: boolean;
    }[],
    /** MAX_QUEUE_DEPTH: the queued jobs are counted up to it, which is all the check needs to know. */
    queueDepthLimit: number,
  ): Promise<LimitUsage[]> {
    const found = await rows<{ seconds: string | null; captured: string | null; queued: string }>(
      manager,
      `WITH look AS (
         SELECT * FROM unnest($1::text[], $2::text[], $3::date[], $4::boolean[], $5::boolean[]) WITH ORDINALITY
           AS look(account_id, region, since, quota, spend_cap, n)
       ), region AS (
         SELECT regions.region, ${queuedJobs('regions.region', '$6')} AS queued FROM (SELECT DISTINCT region FROM look) regions
       )
       SELECT CASE WHEN look.quota THEN ${processingSecondsSince('look.account_id', 'look.since')} END AS seconds,
              CASE WHEN look.spend_cap THEN ${capturedCreditsSince('look.account_id', 'look.since')} END AS captured,
              region.queued
         FROM look JOIN region USING (region) ORDER BY look.n`,
      [
        looks.map((look) => look.accountId),
        looks.map((look) => look.region),
        looks.map((look) => usageDay(look.since)),
        looks.map((look) => look.quota),
        looks.map((look) => look.spendCap),
        queueDepthLimit,
      ],
      { prepared: 'jobs-limit-usage' },
    );
    return found.map((usage) => ({
      secondsUsed: Number(usage.seconds ?? 0),
      capturedCredits: Number(usage.captured ?? 0),
      queued: Number(usage.queued),
    }));
  }
}

/** What step 8's checks count for one submit (JobsRepository.limitUsage). */
export interface LimitUsage {
  secondsUsed: number;
  capturedCredits: number;
  /** The region's queued jobs, counted up to MAX_QUEUE_DEPTH. */
  queued: number;
}

/**
 * Jobs waiting in a region's queue (each region has its own queue and workers), counted up to `limit`:
 * a submit only asks whether the queue is full, and an uncapped count read every queued job of the
 * region on every submit — its cost grew with the backlog (bench/profile-submits: PostgreSQL's CPU per
 * submit climbed from ~2.5 to ~10 ms over one bench run).
 */
const queuedJobs = (region: string, limit: string): string =>
  `(SELECT count(*) FROM (SELECT 1 FROM jobs WHERE status = 'queued' AND region = ${region} LIMIT ${limit}::int) queued)`;
