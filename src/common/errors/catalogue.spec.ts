// Walks the error catalogue against the specification's own tables (section 7), read from the
// committed copy in docs/spec, so a drift between the two fails here and not in a client.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { CATALOGUE, ERROR_CODES, ERROR_TYPES, type CatalogueEntry } from './catalogue';

const SPEC_PATH = resolve(__dirname, '../../../docs/spec/specification.txt');

interface SpecRow {
  code: string;
  type: string;
  status: number;
  condition: string;
  sdkAutoRetry: boolean;
}

/** Rows of the tables under "### 7.N <family> …" for N = 2…9. */
function parseSection7(text: string): SpecRow[] {
  const rows: SpecRow[] = [];
  let family: string | null = null;
  for (const line of text.split('\n')) {
    const heading = /^###\s+7\.(\d+)\s+(\S+)/.exec(line);
    if (heading) {
      const section = Number(heading[1]);
      family = section >= 2 && section <= 9 ? heading[2] : null;
      continue;
    }
    if (/^#{1,2}\s/.test(line)) family = null;
    if (!family || !line.startsWith('|')) continue;
    const cells = line
      .split('|')
      .slice(1, -1)
      .map((cell) => cell.trim());
    if (cells.length !== 4 || cells[0] === 'Code' || /^-+$/.test(cells[0])) continue;
    const [code, http, condition, retry] = cells;
    if (retry !== 'yes' && retry !== 'no') throw new Error(`unexpected SDK auto-retry value "${retry}" for ${code}`);
    rows.push({ code, type: family, status: Number(http), condition, sdkAutoRetry: retry === 'yes' });
  }
  return rows;
}

/** 7.1 rule 6: "(true for a and b, false for c, d, e, f)". */
function parseRule6(text: string): { trueFor: string[]; falseFor: string[] } {
  const rule = text.split('\n').find((line) => line.startsWith('6. '));
  if (!rule) throw new Error('rule 6 of section 7.1 not found');
  const match = /true for ([^)]*?), false for ([^)]*)\)/.exec(rule);
  if (!match) throw new Error(`rule 6 has an unexpected form: ${rule}`);
  const names = (list: string) =>
    list
      .split(/,\s*|\s+and\s+/)
      .map((name) => name.trim())
      .filter(Boolean);
  return { trueFor: names(match[1]), falseFor: names(match[2]) };
}

const specText = readFileSync(SPEC_PATH, 'utf8');
const specRows = parseSection7(specText);
const catalogue: Record<string, CatalogueEntry> = CATALOGUE;

describe('error catalogue against the specification (section 7)', () => {
  it('reads the specification copied from the shared spec', () => {
    expect(specText).toContain('45 codes in 8 families');
  });

  it('the specification lists exactly 45 distinct codes in the 8 families', () => {
    expect(specRows).toHaveLength(45);
    expect(new Set(specRows.map((row) => row.code)).size).toBe(45);
    expect(new Set(specRows.map((row) => row.type))).toEqual(new Set(ERROR_TYPES));
  });

  it('the catalogue has every specified code, and nothing else except rows marked added', () => {
    const specCodes = specRows.map((row) => row.code).sort();
    const notAdded = ERROR_CODES.filter((code) => !catalogue[code].added).sort();
    expect(notAdded).toEqual(specCodes);
  });

  it.each(specRows.map((row) => [row.code, row] as const))(
    '%s has the specified family and HTTP status',
    (code, row) => {
      expect(catalogue[code]).toBeDefined();
      expect({ type: catalogue[code].type, status: catalogue[code].status }).toEqual({
        type: row.type,
        status: row.status,
      });
    },
  );

  it.each(specRows.map((row) => [row.code, row] as const))(
    '%s: retryable equals the "SDK auto-retry" column',
    (code, row) => {
      expect(catalogue[code].retryable).toBe(row.sdkAutoRetry);
    },
  );

  it('the six retryable values named in 7.1 rule 6 hold', () => {
    const { trueFor, falseFor } = parseRule6(specText);
    expect(trueFor.sort()).toEqual(['concurrency_limit_exceeded', 'rate_limit_exceeded']);
    expect(falseFor.sort()).toEqual([
      'insufficient_credits',
      'invalid_api_key',
      'missing_api_key',
      'spend_limit_exceeded',
    ]);
    for (const code of trueFor) expect([code, catalogue[code].retryable]).toEqual([code, true]);
    for (const code of falseFor) expect([code, catalogue[code].retryable]).toEqual([code, false]);
  });

  it('added codes are not among the 45, and each is documented like a specified one', () => {
    const specCodes = new Set(specRows.map((row) => row.code));
    const added = ERROR_CODES.filter((code) => catalogue[code].added);
    expect(added.length).toBeGreaterThan(0);
    for (const code of added) {
      const row = catalogue[code];
      expect([code, specCodes.has(code)]).toEqual([code, false]);
      expect(code).toMatch(/^[a-z]+(_[a-z]+)*$/);
      expect(ERROR_TYPES).toContain(row.type);
      expect(row.status).toBeGreaterThanOrEqual(400);
      expect(row.status).toBeLessThan(600);
      expect(typeof row.retryable).toBe('boolean');
      expect(row.condition.trim().length).toBeGreaterThan(5);
      expect(row.message.trim().length).toBeGreaterThan(5);
    }
  });

  it('every message is an English sentence (capital first letter, final full stop)', () => {
    for (const code of ERROR_CODES) {
      const { message } = catalogue[code];
      expect([code, /^[A-Z][^\n]*[.!?]$/.test(message)]).toEqual([code, true]);
      expect([code, message.includes('  ')]).toEqual([code, false]);
    }
  });

  it('every specified condition is the catalogue condition of that code', () => {
    for (const row of specRows) expect([row.code, catalogue[row.code].condition]).toEqual([row.code, row.condition]);
  });
});
