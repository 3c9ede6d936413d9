// What the capacity benchmark reads off its private servers and processes: PostgreSQL statements
// (pg_stat_statements calls) and transactions (pg_stat_database xact_commit) of one database, Redis
// commands (INFO commandstats), and CPU seconds per process group from /proc. Every reading is a
// cumulative snapshot; a measurement is the difference of two (nothing is reset, so readings may overlap).
import { readdir, readFile } from 'node:fs/promises';
import { Client } from 'pg';
import type { Redis } from 'ioredis';

/** The role the meter's own queries run as, so that they can be told apart from the service's. */
export const METER_ROLE = 'capmeter';

/** Transaction control as pg_stat_statements records it (track_utility): a round trip, not work. */
const CONTROL = /^\s*(BEGIN|COMMIT|ROLLBACK|START TRANSACTION|SAVEPOINT|RELEASE|SET\s)/i;

export interface DatabaseReading {
  /** calls per statement text of the service's roles (not the meter's). */
  calls: Map<string, number>;
  /** calls of the meter's own statements in the database (each its own transaction). */
  meterCalls: number;
  xactCommit: number;
  xactRollback: number;
}

export interface DatabaseDelta {
  statements: number;
  /** Of `statements`, BEGIN/COMMIT/ROLLBACK/SAVEPOINT/SET: round trips that do no work. */
  control: number;
  transactions: number;
  rollbacks: number;
  /** The statements with the most calls, with their calls. */
  top: { query: string; calls: number }[];
}

export async function readDatabase(meter: Client, database: string): Promise<DatabaseReading> {
  const statements = await meter.query<{ query: string; role: string; calls: string }>(
    `SELECT query, userid::regrole::text AS role, sum(calls)::bigint AS calls
       FROM pg_stat_statements
      WHERE dbid = (SELECT oid FROM pg_database WHERE datname = $1)
      GROUP BY query, role`,
    [database],
  );
  const calls = new Map<string, number>();
  let meterCalls = 0;
  for (const row of statements.rows) {
    if (row.role === METER_ROLE) meterCalls += Number(row.calls);
    else calls.set(row.query, (calls.get(row.query) ?? 0) + Number(row.calls));
  }
  const [stats] = (
    await meter.query<{ xact_commit: string; xact_rollback: string }>(
      'SELECT xact_commit, xact_rollback FROM pg_stat_database WHERE datname = $1',
      [database],
    )
  ).rows;
  return { calls, meterCalls, xactCommit: Number(stats.xact_commit), xactRollback: Number(stats.xact_rollback) };
}

export function databaseDelta(before: DatabaseReading, after: DatabaseReading, topCount = 12): DatabaseDelta {
  let statements = 0;
  let control = 0;
  const top: { query: string; calls: number }[] = [];
  for (const [query, calls] of after.calls) {
    const delta = calls - (before.calls.get(query) ?? 0);
    if (delta <= 0) continue;
    statements += delta;
    if (CONTROL.test(query)) control += delta;
    top.push({ query: query.replace(/\s+/g, ' ').slice(0, 160), calls: delta });
  }
  top.sort((a, b) => b.calls - a.calls);
  return {
    statements,
    control,
    // The meter's statements are transactions of their own in the same database: not the service's.
    transactions: after.xactCommit - before.xactCommit - (after.meterCalls - before.meterCalls),
    rollbacks: after.xactRollback - before.xactRollback,
    top: top.slice(0, topCount),
  };
}

/** calls per Redis command (lower case), from INFO commandstats. */
export async function readRedis(redis: Redis): Promise<Map<string, number>> {
  const info = await redis.info('commandstats');
  const calls = new Map<string, number>();
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls.set(match[1], Number(match[2]));
  return calls;
}

/** The meter's own commands (INFO) are left out. */
export function redisDelta(before: Map<string, number>, after: Map<string, number>): Record<string, number> {
  const delta: Record<string, number> = {};
  for (const [command, calls] of after) {
    if (command === 'info') continue;
    const d = calls - (before.get(command) ?? 0);
    if (d > 0) delta[command] = d;
  }
  return delta;
}

export function total(counts: Record<string, number>): number {
  return Object.values(counts).reduce((sum, value) => sum + value, 0);
}

async function statOf(pid: number): Promise<{ ppid: number; cpuSeconds: number } | null> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(fields[1]), cpuSeconds: (Number(fields[11]) + Number(fields[12])) / 100 };
  } catch {
    return null;
  }
}

/** CPU seconds used so far by each process of each named group (pids, and the children of `childrenOf`). */
export type CpuReading = Record<string, Map<number, number>>;

export async function readCpu(groups: Record<string, { pids: number[]; childrenOf?: number }>): Promise<CpuReading> {
  const stats = new Map<number, { ppid: number; cpuSeconds: number }>();
  for (const entry of await readdir('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    const stat = await statOf(pid);
    if (stat) stats.set(pid, stat);
  }
  const result: CpuReading = {};
  for (const [name, group] of Object.entries(groups)) {
    const pids = new Map<number, number>();
    for (const pid of group.pids) if (stats.has(pid)) pids.set(pid, stats.get(pid)!.cpuSeconds);
    if (group.childrenOf !== undefined)
      for (const [pid, stat] of stats) if (stat.ppid === group.childrenOf) pids.set(pid, stat.cpuSeconds);
    result[name] = pids;
  }
  const usage = process.cpuUsage();
  result.bench_client = new Map([[process.pid, (usage.user + usage.system) / 1e6]]);
  return result;
}

/** The whole machine's busy CPU seconds so far (all cores), from /proc/stat. */
export async function machineBusySeconds(): Promise<number> {
  const [line] = (await readFile('/proc/stat', 'utf8')).split('\n');
  const values = line.trim().split(/\s+/).slice(1).map(Number);
  const busy = values.reduce((sum, value) => sum + value, 0) - values[3] - values[4];
  return busy / 100;
}

/**
 * CPU seconds each group used between two readings, process by process: a process that started in
 * between counts whole, one that ended is left out (a PostgreSQL backend or autovacuum worker that
 * exits would otherwise take its whole past CPU time out of the group's sum).
 */
export function cpuDelta(before: CpuReading, after: CpuReading): Record<string, number> {
  return Object.fromEntries(
    Object.entries(after).map(([name, pids]) => {
      let seconds = 0;
      for (const [pid, cpu] of pids) seconds += cpu - (before[name]?.get(pid) ?? 0);
      return [name, seconds];
    }),
  );
}
