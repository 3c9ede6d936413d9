import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { ApiError } from '../common/errors';
import { toList, type ListResponse } from '../common/pagination';
import { billingPeriod } from './billing-period';
import { BillingRepository, type LedgerFilter } from './billing.repository';
import { ledgerCsvHeader, ledgerCsvRow } from './ledger-csv';
import { toLedgerEntry, type LedgerEntry } from './ledger-entry';
import { PROCESSING_USAGE, type ProcessingUsage } from './processing-usage';

export interface CreditBalance {
  object: 'credit_balance';
  balance_credits: number;
  reserved_credits: number;
  available_credits: number;
  plan: string;
  spend_limit_usd: number | null;
  spent_usd: number;
  period_start: string;
  period_resets_at: string;
  quota: { processing_minutes_limit: number | null; processing_minutes_used: number };
  /** Jobs counted against `limits.concurrent_jobs` now (queued and processing). */
  running_jobs: number;
  /** The plan's limits, for showing current use against them. */
  limits: { requests_per_second: number; concurrent_jobs: number; max_output_height: number; apis: string[] };
}

/** Credits charged per UTC calendar month, against the spend cap (the dashboard's billing page). */
export interface MonthlySpend {
  object: 'monthly_spend';
  months: { month: string; charged_credits: number; charged_usd: number }[];
  spend_limit_usd: number | null;
}

/** Ledger rows read per query while exporting: the export streams, whatever the ledger's length. */
const EXPORT_BATCH = 1000;

/** Credits charged per UTC day, from the ledger's captures (the dashboard's 30-day chart). */
export interface DailyUsage {
  object: 'usage';
  days: { date: string; charged_credits: number; charged_usd: number }[];
  total_charged_credits: number;
  total_charged_usd: number;
}

/** Rounds USD to cents without binary-float surprises (0.1 + 0.2). */
export function usd(credits: number, usdPerCredit: number): number {
  return Math.round(credits * usdPerCredit * 100) / 100;
}

export type { LedgerEntry };

@Injectable()
export class BillingService {
  constructor(
    private readonly repository: BillingRepository,
    @Inject(PROCESSING_USAGE) private readonly usage: ProcessingUsage,
  ) {}

  /** Adds credits to an account (operator grant), with its ledger row, in one transaction. */
  async grant(accountId: string, credits: number, reason: string): Promise<LedgerEntry> {
    const row = await this.repository.transaction(async (manager) => {
      const after = await this.repository.addToBalance(manager, accountId, credits);
      if (!after) throw new ApiError('resource_missing', { param: 'id', message: 'No account with this id.' });
      return this.repository.appendLedger(manager, {
        accountId,
        kind: 'grant',
        credits,
        reason,
        balanceAfter: after.balance,
        reservedAfter: after.reserved,
      });
    });
    return toLedgerEntry(row);
  }

  /** Credits charged since `since` (inside the caller's transaction when given). */
  capturedSince(accountId: string, since: Date, manager?: EntityManager): Promise<number> {
    return this.repository.capturedSince(accountId, since, manager);
  }

  async credits(accountId: string): Promise<CreditBalance> {
    const row = await this.repository.balance(accountId);
    if (!row) throw new Error(`account ${accountId} vanished`);
    const period = billingPeriod();
    const [captured, minutesUsed] = await Promise.all([
      this.repository.capturedSince(accountId, period.start),
      this.usage.minutesUsedSince(accountId, period.start),
    ]);
    const balance = Number(row.balance_credits);
    const reserved = Number(row.reserved_credits);
    return {
      object: 'credit_balance',
      balance_credits: balance,
      reserved_credits: reserved,
      available_credits: balance - reserved,
      plan: row.plan_id,
      spend_limit_usd: row.spend_limit_usd === null ? null : Number(row.spend_limit_usd),
      spent_usd: usd(captured, Number(row.usd_per_credit)),
      period_start: period.start.toISOString(),
      period_resets_at: period.resetsAt.toISOString(),
      quota: { processing_minutes_limit: row.processing_minutes_per_month, processing_minutes_used: minutesUsed },
      running_jobs: row.open_jobs,
      limits: {
        requests_per_second: row.requests_per_second,
        concurrent_jobs: row.concurrent_jobs,
        max_output_height: row.max_output_height,
        apis: row.apis,
      },
    };
  }

  /** USD at the account's current price per credit, like `spent_usd`. */
  async monthlySpend(accountId: string, months: number): Promise<MonthlySpend> {
    const row = await this.repository.balance(accountId);
    if (!row) throw new Error(`account ${accountId} vanished`);
    const rate = Number(row.usd_per_credit);
    const perMonth = await this.repository.capturedPerMonth(accountId, months);
    return {
      object: 'monthly_spend',
      months: perMonth.map((month) => ({
        month: month.month,
        charged_credits: Number(month.credits),
        charged_usd: usd(Number(month.credits), rate),
      })),
      spend_limit_usd: row.spend_limit_usd === null ? null : Number(row.spend_limit_usd),
    };
  }

  /** USD at the account's current price per credit, like `spent_usd`. */
  async dailyUsage(accountId: string, days: number, usdPerCredit: number): Promise<DailyUsage> {
    const perDay = await this.repository.capturedPerDay(accountId, days);
    const rows = perDay.map((day) => ({
      date: day.day,
      charged_credits: Number(day.credits),
      charged_usd: usd(Number(day.credits), usdPerCredit),
    }));
    const total = rows.reduce((sum, day) => sum + day.charged_credits, 0);
    return {
      object: 'usage',
      days: rows,
      total_charged_credits: total,
      total_charged_usd: usd(total, usdPerCredit),
    };
  }

  async ledger(
    accountId: string,
    filter: LedgerFilter,
    limit = 20,
    startingAfter?: string,
  ): Promise<ListResponse<LedgerEntry>> {
    const rows = await this.repository.ledger(accountId, filter, limit + 1, startingAfter);
    return toList(rows.map(toLedgerEntry), limit, (entry) => entry.id);
  }

  /**
   * Every entry `filter` keeps, newest first, as CSV lines: read a batch at a time, so memory stays flat
   * whatever the ledger's length. The first batch is read before anything is returned, so a database
   * failure is still an error response, not a truncated file.
   */
  async ledgerCsv(accountId: string, filter: LedgerFilter): Promise<AsyncIterable<string>> {
    const first = await this.repository.ledger(accountId, filter, EXPORT_BATCH);
    const repository = this.repository;
    return (async function* () {
      yield ledgerCsvHeader();
      let batch = first;
      while (batch.length > 0) {
        yield batch.map((row) => ledgerCsvRow(toLedgerEntry(row))).join('');
        if (batch.length < EXPORT_BATCH) return;
        batch = await repository.ledger(accountId, filter, EXPORT_BATCH, batch[batch.length - 1].id);
      }
    })();
  }
}
