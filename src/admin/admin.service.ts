import { Injectable } from '@nestjs/common';
import { SCOPES } from '../auth/auth-context';
import { ApiKeysService, type ApiKeyView } from '../auth/api-keys.service';
import { CredentialsVersion } from '../auth/credentials-version';
import { BillingService, type LedgerEntry } from '../billing/billing.service';
import { ApiError } from '../common/errors';
import { newId } from '../common/ids';
import { MaintenanceService, type MaintenanceState } from '../common/maintenance/maintenance.service';
import { toList, type ListResponse } from '../common/pagination';
import { AdminRepository, type AccountPatch, type AccountRow } from './admin.repository';
import type { PatchAccountDto } from './dto/admin.dto';

export interface AccountView {
  object: 'account';
  id: string;
  name: string;
  plan: string;
  status: string;
  subscription_status: string;
  spend_limit_usd: number | null;
  balance_credits: number;
  reserved_credits: number;
  created_at: string;
  updated_at: string;
}

function toAccountView(row: AccountRow): AccountView {
  return {
    object: 'account',
    id: row.id,
    name: row.name,
    plan: row.plan_id,
    status: row.status,
    subscription_status: row.subscription_status,
    spend_limit_usd: row.spend_limit_usd === null ? null : Number(row.spend_limit_usd),
    balance_credits: Number(row.balance_credits),
    reserved_credits: Number(row.reserved_credits),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** Operator actions, shared by the admin HTTP API and the `npm run admin` command line. */
@Injectable()
export class AdminService {
  constructor(
    private readonly repository: AdminRepository,
    private readonly keys: ApiKeysService,
    private readonly billing: BillingService,
    private readonly maintenance: MaintenanceService,
    private readonly credentials: CredentialsVersion,
  ) {}

  /** A new account and its first API key (every scope), created together or not at all. */
  async createAccount(name: string, plan: string): Promise<{ account: AccountView; api_key: ApiKeyView }> {
    return this.repository.transaction(async (manager) => {
      const account = await this.repository.insertAccount(manager, { id: newId('acct'), name, planId: plan });
      const apiKey = await this.keys.create(account.id, [...SCOPES], null, manager);
      return { account: toAccountView(account), api_key: apiKey };
    });
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
