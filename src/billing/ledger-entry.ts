// A ledger row as the API shows it, apart from the service so the CSV writer (ledger-csv.ts) and the
// service can both use it without importing each other.
import type { LedgerRow } from './billing.repository';

export interface LedgerEntry {
  object: 'ledger_entry';
  id: string;
  kind: LedgerRow['kind'];
  credits: number;
  job_id: string | null;
  reason: string | null;
  balance_after: number;
  reserved_after: number;
  created_at: string;
}

export function toLedgerEntry(row: LedgerRow): LedgerEntry {
  return {
    object: 'ledger_entry',
    id: row.id,
    kind: row.kind,
    credits: Number(row.credits),
    job_id: row.job_id,
    reason: row.reason,
    balance_after: Number(row.balance_after),
    reserved_after: Number(row.reserved_after),
    created_at: row.created_at.toISOString(),
  };
}
