// The ledger as CSV (RFC 4180) for spreadsheets and accounting tools. Eight columns need no library:
// quoting is a few lines, and cells are neutralised against formula injection (OWASP: a cell that
// starts with = + - @ or a tab/CR is read as a formula by Excel and LibreOffice), which the common
// CSV writers leave off by default.
import type { LedgerEntry } from './ledger-entry';

export const LEDGER_CSV_COLUMNS = [
  'created_at',
  'id',
  'kind',
  'credits',
  'balance_after',
  'reserved_after',
  'job_id',
  'reason',
] as const satisfies readonly (keyof LedgerEntry)[];

/** One cell: formula-looking text prefixed with ', then quoted when it holds a quote, comma or line break. */
export function csvCell(value: string | number | null): string {
  if (value === null) return '';
  let text = String(value);
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export function ledgerCsvHeader(): string {
  return `${LEDGER_CSV_COLUMNS.join(',')}\r\n`;
}

export function ledgerCsvRow(entry: LedgerEntry): string {
  return `${LEDGER_CSV_COLUMNS.map((column) => csvCell(entry[column])).join(',')}\r\n`;
}
