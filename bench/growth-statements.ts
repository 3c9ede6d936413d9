// `node dist-bench/bench/growth-statements.js [10k|10m]`: the SQL each request path of the growth
// benchmark issues, as PostgreSQL logged it (log_min_duration_statement = 0 on that database while it
// runs), then EXPLAIN (ANALYZE, BUFFERS) of each on the same database, written as Markdown to stdout
// (docs/explain-10m.md is this, run on the 10M database). Writes are explained inside a rolled-back
// transaction.
import { randomUUID } from 'node:crypto';
import { open, stat } from 'node:fs/promises';
import { Client } from 'pg';
import { growthDatabase, LARGE, SMALL } from './lib/growth-seed';
import { sdrClip } from './lib/media';
import { openStream, PATHS, startSide, stopSide, type Side } from './growth';

/** A table with more rows than this must never be read whole on a request path. */
const LARGE_TABLE_ROWS = 10_000;
const LOG = process.env.PG_LOG ?? '/var/log/postgresql/postgresql-15-main.log';

interface Logged {
  sql: string;
  params: string[];
}

async function logSize(): Promise<number> {
  return (await stat(LOG)).size;
}

async function readFrom(offset: number): Promise<string> {
  const file = await open(LOG, 'r');
  try {
    const { size } = await file.stat();
    const buffer = Buffer.alloc(size - offset);
    await file.read(buffer, 0, buffer.length, offset);
    return buffer.toString();
  } finally {
    await file.close();
  }
}

/** The statements of `database` in a slice of the server log, with their parameters. */
function parse(text: string, database: string): Logged[] {
  const entries = text.split(/\n(?=\d{4}-\d\d-\d\d )/);
  const out: Logged[] = [];
  // A statement's parameters come in the next entry of the same server process (entries interleave).
  const lastOf = new Map<string, Logged>();
  for (const entry of entries) {
    if (!entry.includes(`@${database} `)) continue;
    const pid = /\[(\d+)\]/.exec(entry)?.[1] ?? '';
    // parse and bind are logged too (bind with its parameters): only execute/statement are kept.
    const statement = /duration: [\d.]+ ms {2}(statement|execute|parse|bind)[^:]*: ([\s\S]*)$/.exec(entry);
    if (statement) {
      const logged = { sql: statement[2].trim(), params: [] };
      if (statement[1] === 'statement' || statement[1] === 'execute') out.push(logged);
      lastOf.set(pid, logged);
      continue;
    }
    const detail = /DETAIL: {2}parameters: ([\s\S]*)$/.exec(entry);
    const last = lastOf.get(pid);
    if (detail && last) {
      for (const match of detail[1].matchAll(/\$(\d+) = (NULL|'(?:[^']|'')*')/g))
        last.params[Number(match[1]) - 1] = match[2];
    }
  }
  return out.filter((entry) => !/^(BEGIN|COMMIT|ROLLBACK|START TRANSACTION|SET |SHOW |SELECT 1$)/i.test(entry.sql));
}

function inline(entry: Logged): string {
  return entry.sql.replace(/\$(\d+)\b/g, (_, n: string) => entry.params[Number(n) - 1] ?? 'NULL');
}

async function main(): Promise<void> {
  const scale = process.argv[2] === '10k' ? SMALL : LARGE;
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const db = await growthDatabase(scale, log);
  for (const migration of db.migrations) log(`migration ${migration.name}: ${migration.seconds} s`);
  const admin = new Client({ connectionString: db.url });
  await admin.connect();
  await admin.query(`ALTER DATABASE "${db.name}" SET log_min_duration_statement = 0`);
  const captured: { path: string; statements: Logged[] }[] = [];
  let side: Side | undefined;
  try {
    side = await startSide(scale.label, db, await sdrClip(320, 180, 1));
    const paths: { name: string; send: (s: Side) => Promise<unknown> }[] = PATHS.map((path) => ({
      name: path.name,
      send: async (s: Side) => {
        const options = path.options(s);
        const spec = options.setupRequest
          ? options.setupRequest({ method: options.method, headers: options.headers } as never)
          : options;
        const response = await fetch(`${s.api.url}${options.url}`, {
          method: options.method ?? 'GET',
          headers: { ...(spec.headers as Record<string, string>), 'idempotency-key': randomUUID() },
          body: (spec as { body?: string }).body,
        });
        await response.arrayBuffer();
      },
    }));
    paths.push({ name: 'event stream: subscribe', send: (s) => openStream(s) });
    paths.push({ name: 'event stream: first event (resume)', send: (s) => openStream(s, s.lastEventIds[5]) });
    for (const path of paths) {
      // Twice: the first of a kind may warm caches (plans, the account); the second is the steady one.
      await path.send(side);
      // Past the metrics snapshot's sharing window (1 s, src/metrics/system-gauges.ts): the scrape reads again.
      await new Promise((done) => setTimeout(done, 1100));
      const offset = await logSize();
      await path.send(side);
      await new Promise((done) => setTimeout(done, 500));
      captured.push({ path: path.name, statements: parse(await readFrom(offset), db.name) });
    }
  } finally {
    await admin.query(`ALTER DATABASE "${db.name}" RESET log_min_duration_statement`);
    if (side) await stopSide(side);
  }
  const sizes = new Map(
    (
      await admin.query<{ relname: string; rows: number }>(
        `SELECT relname, reltuples::float8 AS rows FROM pg_class WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace`,
      )
    ).rows.map((table) => [table.relname, table.rows]),
  );
  const lines: string[] = [];
  for (const { path, statements } of captured) {
    lines.push(`## ${path}`, '');
    if (!statements.length) lines.push('(no SQL: answered from memory or Redis)', '');
    // One transaction per path, rolled back: a statement sees the rows the ones before it wrote (a
    // submit's items, its job); a failed one is undone to its savepoint alone.
    await admin.query('BEGIN');
    for (const statement of statements) {
      const sql = inline(statement);
      const write = /^\s*(INSERT|UPDATE|DELETE|WITH)/i.test(sql) || /FOR UPDATE/i.test(sql);
      await admin.query('SAVEPOINT explained');
      let plan: string;
      try {
        const result = await admin.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`);
        plan = result.rows.map((row) => row['QUERY PLAN']).join('\n');
        await admin.query('RELEASE SAVEPOINT explained');
      } catch (error) {
        plan = `EXPLAIN failed: ${(error as Error).message}`;
        await admin.query('ROLLBACK TO SAVEPOINT explained');
      }
      const seq = [...plan.matchAll(/Seq Scan on (\w+)/g)].map((match) => match[1]);
      const large = seq.filter((table) => (sizes.get(table) ?? 0) > LARGE_TABLE_ROWS);
      const time = /Execution Time: ([\d.]+) ms/.exec(plan)?.[1];
      const buffers = /Buffers: ([^\n]*)/.exec(plan)?.[1];
      lines.push(
        '```sql',
        statement.sql,
        '```',
        statement.params.length
          ? `parameters: ${statement.params.join(', ')}${write ? ' (explained in a rolled-back transaction)' : ''}`
          : '',
        '',
        '```',
        plan,
        '```',
        '',
        `verdict: ${large.length ? `**sequential scan of ${large.join(', ')}**` : seq.length ? `no large table scanned (seq scan only of ${[...new Set(seq)].join(', ')}: small tables)` : 'index access only'}; ${time ?? '?'} ms, ${buffers ?? 'no buffers'}`,
        '',
      );
    }
    await admin.query('ROLLBACK');
  }
  await admin.end();
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
