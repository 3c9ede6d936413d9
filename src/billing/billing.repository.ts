import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { row, rows } from '../common/database/sql';
import { newId } from '../common/ids';
import { addToUsageDays, capturedCreditsSince, usageDay, utcDay } from './usage-days';

export const LEDGER_KINDS = ['grant', 'authorise', 'capture', 'release'] as const;
export type LedgerKind = (typeof LEDGER_KINDS)[number];

/** Which entries a ledger read keeps: one kind, and created in [createdGte, createdLt). */
export interface LedgerFilter {
  kind?: LedgerKind;
  createdGte?: Date;
  createdLt?: Date;
}

export interface LedgerRow {
  id: string;
  kind: LedgerKind;
  credits: string;
  job_id: string | null;
  reason: string | null;
  balance_after: string;
  reserved_after: string;
  created_at: Date;
}

export interface BalanceRow {
  balance_credits: string;
  reserved_credits: string;
  /** Jobs queued or processing, kept with their credit holds (holds.repository.ts). */
  open_jobs: number;
  plan_id: string;
  spend_limit_usd: string | null;
  usd_per_credit: string;
  processing_minutes_per_month: number | null;
  requests_per_second: number;
  concurrent_jobs: number;
  max_output_height: number;
  apis: string[];
}

export interface LedgerEntryInput {
  accountId: string;
  kind: LedgerKind;
  credits: number;
  jobId?: string;
  reason?: string;
  balanceAfter: string;
  reservedAfter: string;
}

/**
 * Appends one credit movement, inside the caller's transaction (every money change writes one), and a
 * capture's credits to its day in account_usage_days in the same statement (src/billing/usage-days.ts).
 * The caller holds the account's row lock: it has changed the balance first (HoldsRepository.settle, a grant).
 */
export async function appendLedger(manager: EntityManager, entry: LedgerEntryInput): Promise<LedgerRow> {
  const rows: LedgerRow[] = await manager.query(
    `WITH entry AS (
       INSERT INTO credit_ledger (id, account_id, kind, credits, job_id, reason, balance_after, reserved_after)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       RETURNING id, account_id, kind, credits, job_id, reason, balance_after, reserved_after, created_at
     ), usage AS (
       ${addToUsageDays('captured_credits', `SELECT account_id, ${utcDay('created_at')}, credits FROM entry WHERE kind = 'capture'`)}
     )
     SELECT id, kind, credits, job_id, reason, balance_after, reserved_after, created_at FROM entry`,
    [
      newId('led'),
      entry.accountId,
      entry.kind,
      entry.credits,
      entry.jobId ?? null,
      entry.reason ?? null,
      entry.balanceAfter,
      entry.reservedAfter,
    ],
  );
  return rows[0];
}

@Injectable()
export class BillingRepository {
  constructor(private readonly db: DataSource) {}

  transaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  async addToBalance(
    manager: EntityManager,
    accountId: string,
    credits: number,
  ): Promise<{ balance: string; reserved: string } | null> {
    const after = await row<{ balance_credits: string; reserved_credits: string }>(
      manager,
      `UPDATE accounts SET balance_credits = balance_credits + $2, updated_at = now() WHERE id = $1
       RETURNING balance_credits, reserved_credits`,
      [accountId, credits],
    );
    return after ? { balance: after.balance_credits, reserved: after.reserved_credits } : null;
  }

  appendLedger(manager: EntityManager, entry: LedgerEntryInput): Promise<LedgerRow> {
    return appendLedger(manager, entry);
  }

  async balance(accountId: string): Promise<BalanceRow | null> {
    const rows: BalanceRow[] = await this.db.query(
      `SELECT a.balance_credits, a.reserved_credits, a.open_jobs, a.plan_id, a.spend_limit_usd, p.usd_per_credit, p.processing_minutes_per_month,
              p.requests_per_second, p.concurrent_jobs, p.max_output_height, p.apis
         FROM accounts a JOIN plans p ON p.id = a.plan_id WHERE a.id = $1`,
      [accountId],
    );
    return rows[0] ?? null;
  }

  /** Credits captured (charged) since `since`, a UTC day's start: what the spend cap and "spent this period" count. */
  async capturedSince(accountId: string, since: Date, manager: EntityManager = this.db.manager): Promise<number> {
    const found = await row<{ total: string }>(manager, `SELECT ${capturedCreditsSince('$1', '$2')} AS total`, [
      accountId,
      usageDay(since),
    ]);
    return Number(found?.total ?? 0);
  }

  /** Credits captured on each of the last `days` UTC days (today included), zero-filled, oldest first. */
  async capturedPerDay(accountId: string, days: number): Promise<{ day: string; credits: string }[]> {
    return rows(
      this.db,
      `SELECT to_char(d.day, 'YYYY-MM-DD') AS day, COALESCE(u.captured_credits, 0) AS credits
         FROM (SELECT (now() AT TIME ZONE 'UTC')::date - back AS day FROM generate_series(0, $2::int - 1) AS back) d
         LEFT JOIN account_usage_days u ON u.account_id = $1 AND u.day = d.day
        ORDER BY d.day`,
      [accountId, days],
    );
  }

  /** Newest first, after the `startingAfter` id, narrowed by `filter`. */
  async ledger(accountId: string, filter: LedgerFilter, limit: number, startingAfter?: string): Promise<LedgerRow[]> {
    return this.db.query(
      `SELECT id, kind, credits, job_id, reason, balance_after, reserved_after, created_at FROM credit_ledger
        WHERE account_id = $1 AND ($2::text IS NULL OR id < $2)
          AND ($4::text IS NULL OR kind = $4)
          AND ($5::timestamptz IS NULL OR created_at >= $5) AND ($6::timestamptz IS NULL OR created_at < $6)
        ORDER BY id DESC LIMIT $3`,
      [
        accountId,
        startingAfter ?? null,
        limit,
        filter.kind ?? null,
        filter.createdGte ?? null,
        filter.createdLt ?? null,
      ],
    );
  }

  /** Credits captured in each of the last `months` UTC calendar months (this one included), zero-filled, oldest first. */
  async capturedPerMonth(accountId: string, months: number): Promise<{ month: string; credits: string }[]> {
    return this.db.query(
      `SELECT to_char(m.month, 'YYYY-MM') AS month, COALESCE(SUM(l.credits), 0) AS credits
         FROM generate_series(date_trunc('month', now() AT TIME ZONE 'UTC') - ($2::int - 1) * interval '1 month',
                              date_trunc('month', now() AT TIME ZONE 'UTC'), interval '1 month') AS m (month)
         LEFT JOIN credit_ledger l ON l.account_id = $1 AND l.kind = 'capture'
              AND l.created_at >= m.month AT TIME ZONE 'UTC' AND l.created_at < (m.month + interval '1 month') AT TIME ZONE 'UTC'
        GROUP BY m.month ORDER BY m.month`,
      [accountId, months],
    );
  }
}
