import type { LedgerEntry } from './billing.service';
import { csvCell, ledgerCsvHeader, ledgerCsvRow } from './ledger-csv';

const entry: LedgerEntry = {
  object: 'ledger_entry',
  id: 'led_1',
  kind: 'grant',
  credits: 500,
  job_id: null,
  reason: 'welcome, "pilot" credits',
  balance_after: 500,
  reserved_after: 0,
  created_at: '2026-11-14T09:30:00.000Z',
};

describe('the ledger as CSV', () => {
  test('a header and one CRLF-terminated line per entry, nulls empty, text quoted only when it must be', () => {
    expect(ledgerCsvHeader()).toBe('created_at,id,kind,credits,balance_after,reserved_after,job_id,reason\r\n');
    expect(ledgerCsvRow(entry)).toBe(
      '2026-11-14T09:30:00.000Z,led_1,grant,500,500,0,,"welcome, ""pilot"" credits"\r\n',
    );
  });

  test('text a spreadsheet would run as a formula is neutralised; numbers are left as numbers', () => {
    expect(csvCell('=HYPERLINK("http://evil.example")')).toBe(`"'=HYPERLINK(""http://evil.example"")"`);
    expect(csvCell('+1')).toBe("'+1");
    expect(csvCell('@SUM(A1)')).toBe("'@SUM(A1)");
    expect(csvCell('line one\nline two')).toBe('"line one\nline two"');
    expect(csvCell(-3)).toBe('-3');
    expect(csvCell(null)).toBe('');
  });
});
