import { Injectable } from '@nestjs/common';
import { SCOPES } from '../auth/auth-context';
import { ApiKeysService, type ApiKeyView } from '../auth/api-keys.service';
import { CredentialsVersion } from '../auth/credentials-version';
import { BillingService, type LedgerEntry } from '../billing/billing.service';
import type { MoneyProblem } from '../billing/money-audit';
import { ApiError } from '../common/errors';
import { newId } from '../common/ids';
import { MaintenanceService, type MaintenanceState } from '../common/maintenance/maintenance.service';
import { toList, type ListResponse } from '../common/pagination';
import { MembersService, type MemberView } from '../members/members.service';
import { toAccountView, type AccountView } from '../account/account-view';
import { AdminRepository, type AccountPatch } from './admin.repository';
import type { PatchAccountDto } from './dto/admin.dto';

/** Operator actions, shared by the admin HTTP API and the `npm run admin` command line. */
@Injectable()
export class AdminService {
  constructor(
    private readonly repository: AdminRepository,
    private readonly keys: ApiKeysService,
    private readonly billing: BillingService,
    private readonly maintenance: MaintenanceService,
    private readonly credentials: CredentialsVersion,
    private readonly members: MembersService,
  ) {}

  /**
   * A new account and its first API key (every scope), and with `ownerEmail` its first owner with a
   * one-time set-password link: created together or not at all; the link is mailed after the commit.
   */
  async createAccount(
    name: string,
    plan: string,
    ownerEmail?: string,
  ): Promise<{ account: AccountView; api_key: ApiKeyView; owner?: MemberView; owner_invite_url?: string }> {
    const created = await this.repository.transaction(async (manager) => {
      const account = await this.repository.insertAccount(manager, { id: newId('acct'), name, planId: plan });
      const apiKey = await this.keys.create(account.id, [...SCOPES], null, null, manager);
      const owner = ownerEmail
        ? await this.members.createInvitation(manager, account.id, ownerEmail, 'owner')
        : undefined;
      return { account: toAccountView(account), apiKey, owner };
    });
    if (!created.owner) return { account: created.account, api_key: created.apiKey };
    this.members.mailInvitation(created.owner, created.account.name);
    const { invite_url, ...owner } = created.owner;
    return { account: created.account, api_key: created.apiKey, owner, owner_invite_url: invite_url };
  }

  /**
   * The per-day usage the balance, the chart and the limits read, summed again from the ledger and the
   * jobs (every account, or one): once an old version that did not keep it has stopped serving
   * (migrations/1765520000000-account-usage-days.ts).
   */
  async rebuildUsageDays(accountId?: string): Promise<{ object: 'usage_days_rebuilt'; accounts: number }> {
    return { object: 'usage_days_rebuilt', accounts: await this.repository.sumUsageDaysAgain(accountId) };
  }

  /**
   * The money invariants checked against the database (src/billing/money-audit.ts): every account and
   * job, or one account's. `problems` names each account or job that breaks one; empty when exact.
   */
  async auditMoney(accountId?: string): Promise<{ object: 'money_audit'; ok: boolean; problems: MoneyProblem[] }> {
    const problems = await this.repository.moneyProblems(accountId);
    return { object: 'money_audit', ok: problems.length === 0, problems };
  }

  /**
   * Each account's open jobs, which the concurrency limit compares and the balance shows, counted
   * again from the jobs (every account, or one): once an old version that did not keep the number
   * has stopped serving (migrations/1765530000000-account-open-jobs.ts).
   */
  async recountOpenJobs(accountId?: string): Promise<{ object: 'open_jobs_recounted'; accounts: number }> {
    return { object: 'open_jobs_recounted', accounts: await this.repository.countOpenJobsAgain(accountId) };
  }

  /** A member's set-password link, for an operator to hand over (no SMTP, or an owner locked out). */
  passwordLink(email: string) {
    return this.members.operatorLink(email);
  }

  async getAccount(id: string): Promise<AccountView> {
    const row = await this.repository.findAccount(id);
    if (!row) throw new ApiError('resource_missing', { param: 'id', message: 'No account with this id.' });
    return toAccountView(row);
  }

  async listAccounts(limit = 20, startingAfter?: string): Promise<ListResponse<AccountView>> {
    const rows = await this.repository.listAccounts(limit + 1, startingAfter);
    return toList(rows.map(toAccountView), limit, (view) => view.id);
  }

  grantCredits(accountId: string, credits: number, reason: string): Promise<LedgerEntry> {
    return this.billing.grant(accountId, credits, reason);
  }

  async patchAccount(id: string, dto: PatchAccountDto): Promise<AccountView> {
    const patch: AccountPatch = {};
    if (dto.plan !== undefined) patch.plan_id = dto.plan;
    if (dto.status !== undefined) patch.status = dto.status;
    if (dto.subscription_status !== undefined) patch.subscription_status = dto.subscription_status;
    if (dto.spend_limit_usd !== undefined) patch.spend_limit_usd = dto.spend_limit_usd;
    const row = await this.repository.patchAccount(id, patch);
    if (!row) throw new ApiError('resource_missing', { param: 'id', message: 'No account with this id.' });
    // Status and plan travel with every API key lookup: instances must re-read them now.
    await this.credentials.changed();
    return toAccountView(row);
  }

  async setMaintenance(enabled: boolean, until?: string): Promise<{ object: 'maintenance' } & MaintenanceState> {
    if (until && Date.parse(until) <= Date.now()) {
      throw new ApiError('invalid_parameter', { param: 'until', message: 'until must be in the future.' });
    }
    const state = await this.maintenance.set({ enabled, until: enabled ? (until ?? null) : null });
    return { object: 'maintenance', ...state };
  }

  async blockContent(sha256: string, reason?: string) {
    const row = await this.repository.blockContent(sha256, reason ?? null);
    return {
      object: 'blocked_content' as const,
      sha256: row.sha256,
      reason: row.reason,
      created_at: row.created_at.toISOString(),
    };
  }

  async unblockContent(sha256: string): Promise<{ object: 'blocked_content'; sha256: string; deleted: true }> {
    if (!(await this.repository.unblockContent(sha256))) {
      throw new ApiError('resource_missing', { param: 'sha256', message: 'This hash is not on the block list.' });
    }
    return { object: 'blocked_content', sha256, deleted: true };
  }
}
