// An account as the API shows it, to its operators (/v1/admin/accounts) and to itself (/v1/account).

export interface AccountRow {
  id: string;
  name: string;
  plan_id: string;
  status: string;
  subscription_status: string;
  spend_limit_usd: string | null;
  balance_credits: string;
  reserved_credits: string;
  created_at: Date;
  updated_at: Date;
}

/** The columns that fill an AccountRow, for every query that reads one. */
export const ACCOUNT_COLUMNS =
  'id, name, plan_id, status, subscription_status, spend_limit_usd, balance_credits, reserved_credits, created_at, updated_at';

export interface AccountView {
  object: 'account';
  id: string;
  name: string;
  plan: string;
  status: string;
  subscription_status: string;
  /** Monthly spend cap in USD; null: no cap. */
  spend_limit_usd: number | null;
  balance_credits: number;
  reserved_credits: number;
  created_at: string;
  updated_at: string;
}

export function toAccountView(row: AccountRow): AccountView {
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
