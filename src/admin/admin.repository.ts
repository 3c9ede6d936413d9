import { Inject, Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { backfillAccountUsageDaysOn } from '../../migrations/1765520000000-account-usage-days';
import { recountOpenJobsOn } from '../../migrations/1765530000000-account-open-jobs';
import { ACCOUNT_COLUMNS, type AccountRow } from '../account/account-view';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { auditMoneyAt, type MoneyProblem } from '../billing/money-audit';
import { openJobStatuses } from '../jobs/job-lifecycle';

export interface AccountPatch {
  plan_id?: string;
  status?: string;
  subscription_status?: string;
  spend_limit_usd?: number | null;
}

@Injectable()
export class AdminRepository {
  constructor(
    private readonly db: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * account_usage_days summed again from credit_ledger and jobs (the migration's backfill, batch by
   * batch under the accounts' locks, safe while serving): after an old version served beside the new.
   */
  sumUsageDaysAgain(accountId?: string): Promise<number> {
    return backfillAccountUsageDaysOn(this.db, { accounts: accountId ? [accountId] : undefined });
  }

  /**
   * accounts.open_jobs counted again from the jobs (the migration's count, batch by batch under the
   * accounts' locks, safe while serving): after an old version served beside the new.
   */
  countOpenJobsAgain(accountId?: string): Promise<number> {
    return recountOpenJobsOn(this.db, { accounts: accountId ? [accountId] : undefined });
  }

  /** The money invariants' breaks (src/billing/money-audit.ts), of every account or of one. */
  moneyProblems(accountId?: string): Promise<MoneyProblem[]> {
    return auditMoneyAt(this.config.databaseUrl, openJobStatuses(), accountId ? [accountId] : undefined);
  }

  transaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  async insertAccount(
    manager: EntityManager,
    account: { id: string; name: string; planId: string },
  ): Promise<AccountRow> {
    const rows: AccountRow[] = await manager.query(
      `INSERT INTO accounts (id, name, plan_id) VALUES ($1, $2, $3) RETURNING ${ACCOUNT_COLUMNS}`,
      [account.id, account.name, account.planId],
    );
    return rows[0];
  }

  async findAccount(id: string): Promise<AccountRow | null> {
    const rows: AccountRow[] = await this.db.query(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = $1`, [id]);
    return rows[0] ?? null;
  }

  async listAccounts(limit: number, startingAfter?: string): Promise<AccountRow[]> {
    return this.db.query(
      `SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE ($1::text IS NULL OR id < $1) ORDER BY id DESC LIMIT $2`,
      [startingAfter ?? null, limit],
    );
  }

  /** Updates only the fields given; the column names come from a fixed list, never from input. */
  async patchAccount(id: string, patch: AccountPatch): Promise<AccountRow | null> {
    const columns = (['plan_id', 'status', 'subscription_status', 'spend_limit_usd'] as const).filter(
      (column) => column in patch,
    );
    const assignments = columns.map((column, index) => `${column} = $${index + 2}`);
    const rows: [AccountRow[], number] = await this.db.query(
      `UPDATE accounts SET ${[...assignments, 'updated_at = now()'].join(', ')} WHERE id = $1 RETURNING ${ACCOUNT_COLUMNS}`,
      [id, ...columns.map((column) => patch[column])],
    );
    return rows[0][0] ?? null;
  }

  async blockContent(
    sha256: string,
    reason: string | null,
  ): Promise<{ sha256: string; reason: string | null; created_at: Date }> {
    const rows: { sha256: string; reason: string | null; created_at: Date }[] = await this.db.query(
      `INSERT INTO blocked_content (sha256, reason) VALUES ($1, $2)
       ON CONFLICT (sha256) DO UPDATE SET reason = COALESCE(EXCLUDED.reason, blocked_content.reason)
       RETURNING sha256, reason, created_at`,
      [sha256, reason],
    );
    return rows[0];
  }

  async unblockContent(sha256: string): Promise<boolean> {
    const result: [unknown[], number] = await this.db.query(`DELETE FROM blocked_content WHERE sha256 = $1`, [sha256]);
    return result[1] > 0;
  }
}
