import { Injectable } from '@nestjs/common';
import { AccountRepository } from './account.repository';
import { toAccountView, type AccountView } from './account-view';

@Injectable()
export class AccountService {
  constructor(private readonly accounts: AccountRepository) {}

  async get(accountId: string): Promise<AccountView> {
    const found = await this.accounts.find(accountId);
    if (!found) throw new Error(`account ${accountId} vanished`);
    return toAccountView(found);
  }

  async setSpendLimit(accountId: string, spendLimitUsd: number | null): Promise<AccountView> {
    const updated = await this.accounts.setSpendLimit(accountId, spendLimitUsd);
    if (!updated) throw new Error(`account ${accountId} vanished`);
    return toAccountView(updated);
  }
}
