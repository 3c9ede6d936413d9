// The calling account's own settings (what its owner may change; operators use admin/).
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { row } from '../common/database/sql';
import { ACCOUNT_COLUMNS, type AccountRow } from './account-view';

@Injectable()
export class AccountRepository {
  constructor(private readonly db: DataSource) {}

  find(id: string): Promise<AccountRow | null> {
    return row<AccountRow>(this.db, `SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = $1`, [id]);
  }

  /** null removes the cap. Submits read it from the locked account row, so the next submit obeys it. */
  setSpendLimit(id: string, spendLimitUsd: number | null): Promise<AccountRow | null> {
    return row<AccountRow>(
      this.db,
      `UPDATE accounts SET spend_limit_usd = $2, updated_at = now() WHERE id = $1 RETURNING ${ACCOUNT_COLUMNS}`,
      [id, spendLimitUsd],
    );
  }
}
