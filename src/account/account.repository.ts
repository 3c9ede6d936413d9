// The calling account's own settings (what its owner may change; operators use admin/).
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { row } from '../common/database/sql';

export interface OwnAccountRow {
  id: string;
  name: string;
  plan_id: string;
  status: string;
  subscription_status: string;
  spend_limit_usd: string | null;
  created_at: Date;
}

const COLUMNS = 'id, name, plan_id, status, subscription_status, spend_limit_usd, created_at';

@Injectable()
export class AccountRepository {
  constructor(private readonly db: DataSource) {}

  find(id: string): Promise<OwnAccountRow | null> {
    return row<OwnAccountRow>(this.db, `SELECT ${COLUMNS} FROM accounts WHERE id = $1`, [id]);
  }

  /** null removes the cap. Submits read it from the locked account row, so the next submit obeys it. */
  setSpendLimit(id: string, spendLimitUsd: number | null): Promise<OwnAccountRow | null> {
    return row<OwnAccountRow>(
      this.db,
      `UPDATE accounts SET spend_limit_usd = $2, updated_at = now() WHERE id = $1 RETURNING ${COLUMNS}`,
      [id, spendLimitUsd],
    );
  }
}
