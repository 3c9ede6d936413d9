import { Injectable } from '@nestjs/common';
import { AccountRepository, type OwnAccountRow } from './account.repository';

export interface OwnAccountView {
  object: 'account';
  id: string;
  name: string;
  plan: string;
  status: string;
  subscription_status: string;
  /** Monthly spend cap in USD; null: no cap. */
  spend_limit_usd: number | null;
  created_at: string;
}

function toView(row: OwnAccountRow): OwnAccountView {
  return {
    object: 'account',
    id: row.id,
    name: row.name,
    plan: row.plan_id,
    status: row.status,
    subscription_status: row.subscription_status,
    spend_limit_usd: row.spend_limit_usd === null ? null : Number(row.spend_limit_usd),
    created_at: row.created_at.toISOString(),
  };
}

@Injectable()
export class AccountService {
  constructor(private readonly accounts: AccountRepository) {}

  async get(accountId: string): Promise<OwnAccountView> {
    const found = await this.accounts.find(accountId);
    if (!found) throw new Error(`account ${accountId} vanished`);
    return toView(found);
  }

  async setSpendLimit(accountId: string, spendLimitUsd: number | null): Promise<OwnAccountView> {
    const updated = await this.accounts.setSpendLimit(accountId, spendLimitUsd);
    if (!updated) throw new Error(`account ${accountId} vanished`);
    return toView(updated);
  }
}
