// The data-growth benchmark's databases (bench/growth.ts): migrated with the repository's migrations,
// filled by growth-seed.sql, and kept between runs. Seeding ten million jobs takes minutes, so a
// database whose marker (its COMMENT) names this seed's version and scale is reused as it is; only
// migrations added since are applied (timed: that is how a new index's migration is measured at scale).
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { MIGRATIONS, MIGRATIONS_TRANSACTION_MODE } from '../../migrations';
import { ROOT } from './environment';

/** Bump when growth-seed.sql changes what it writes: every kept database is seeded again. */
export const SEED_VERSION = 2;

const POSTGRES = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432';

export interface GrowthScale {
  /** Database name suffix: mediajobs_growth_<label>. */
  label: string;
  jobs: number;
  accounts: number;
}

export const SMALL: GrowthScale = { label: '10k', jobs: 10_000, accounts: 100 };
export const LARGE: GrowthScale = { label: '10m', jobs: 10_000_000, accounts: 100_000 };

export interface GrowthDatabase {
  name: string;
  url: string;
  /** Seconds the seed took (now, or when the kept database was seeded). */
  seedSeconds: number;
  reused: boolean;
  /** Migrations applied to a kept database in this run, with their time. */
  migrations: { name: string; seconds: number }[];
}

async function withClient<T>(url: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

function marker(scale: GrowthScale): string {
  return `growth-seed v${SEED_VERSION} jobs=${scale.jobs} accounts=${scale.accounts}`;
}

/**
 * Applies pending migrations one at a time (a migration that builds an index CONCURRENTLY runs outside a
 * transaction: mode 'each'), timing each.
 */
async function migrate(url: string): Promise<{ name: string; seconds: number }[]> {
  const applied: { name: string; seconds: number }[] = [];
  for (let count = 1; count <= MIGRATIONS.length; count++) {
    const dataSource = new DataSource({
      type: 'postgres',
      url,
      migrations: MIGRATIONS.slice(0, count),
      migrationsTransactionMode: MIGRATIONS_TRANSACTION_MODE,
    });
    await dataSource.initialize();
    try {
      const started = process.hrtime.bigint();
      const ran = await dataSource.runMigrations();
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      for (const migration of ran) applied.push({ name: migration.name, seconds: Math.round(seconds * 10) / 10 });
    } finally {
      await dataSource.destroy();
    }
  }
  return applied;
}

/** Runs growth-seed.sql through psql, its server process reniced (the machine is shared). */
async function runSeed(url: string, scale: GrowthScale, log: (line: string) => void): Promise<void> {
  const appName = `growth-seed-${process.pid}`;
  const child = spawn(
    'nice',
    [
      '-n',
      '10',
      'psql',
      url,
      '-X',
      '-q',
      '-v',
      'ON_ERROR_STOP=1',
      '-c',
      `SET growth.jobs = ${scale.jobs}`,
      '-c',
      `SET growth.accounts = ${scale.accounts}`,
      '-f',
      join(ROOT, 'bench/lib/growth-seed.sql'),
    ],
    { env: { ...process.env, PGAPPNAME: appName }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => log(`  seed ${scale.label}: ${chunk.toString().trim()}`));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  // The work is done by the server process psql talks to: renice it too (ours, found by its name).
  const renice = setInterval(() => {
    withClient(url, (client) =>
      client.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [appName]),
    ).then(
      (result) => {
        for (const { pid } of result.rows) spawn('renice', ['-n', '10', '-p', String(pid)], { stdio: 'ignore' });
        if (result.rows.length) clearInterval(renice);
      },
      () => undefined,
    );
  }, 500);
  const code = await new Promise<number | null>((done) => child.on('close', done));
  clearInterval(renice);
  if (code !== 0) throw new Error(`growth seed (${scale.label}) failed: ${stderr}`);
}

/** The database of `scale`, seeded now or kept from an earlier run, with every migration applied. */
export async function growthDatabase(scale: GrowthScale, log: (line: string) => void): Promise<GrowthDatabase> {
  const name = `mediajobs_growth_${scale.label}`;
  const url = `${POSTGRES}/${name}`;
  const admin = `${POSTGRES}/postgres`;
  const kept = await withClient(admin, async (client) => {
    const result = await client.query<{ comment: string | null }>(
      `SELECT shobj_description(oid, 'pg_database') AS comment FROM pg_database WHERE datname = $1`,
      [name],
    );
    return result.rows[0]?.comment ?? null;
  });
  const expected = marker(scale);
  if (kept?.startsWith(`${expected} `)) {
    const seedSeconds = Number(/seconds=([\d.]+)/.exec(kept)?.[1] ?? NaN);
    const migrations = await migrate(url);
    return { name, url, seedSeconds, reused: true, migrations };
  }
  log(`  seeding ${name} (${scale.jobs} jobs, ${scale.accounts} accounts)${kept ? `; kept one was "${kept}"` : ''}`);
  const started = Date.now();
  await withClient(admin, async (client) => {
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await client.query(`CREATE DATABASE "${name}"`);
  });
  await migrate(url);
  await runSeed(url, scale, log);
  const seedSeconds = Math.round((Date.now() - started) / 100) / 10;
  await withClient(admin, (client) =>
    client.query(`COMMENT ON DATABASE "${name}" IS '${expected} seconds=${seedSeconds}'`),
  );
  log(`  seeded ${name} in ${seedSeconds} s`);
  return { name, url, seedSeconds, reused: false, migrations: [] };
}
