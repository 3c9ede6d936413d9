// Preloaded into an API process under profile (`node --require dist-bench/bench/lib/io-count.js`, see
// bench/profile-submits.ts): counts what the process sends to PostgreSQL (statements, by text) and
// Redis (commands, by name, and round trips: a pipeline or MULTI is one), its CPU time, and samples
// its CPU, between two SIGWINCH (Nest's shutdown hooks take SIGUSR2): the first resets the counts and starts the profiler, the second
// writes IO_COUNT_DIR/counts.json and IO_COUNT_DIR/api.cpuprofile. Wraps the drivers' own methods,
// changes no answer; never loaded outside a profile run.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';

interface Counts {
  pgStatements: Record<string, number>;
  redisCommands: Record<string, number>;
  redisRoundTrips: number;
}

const dir = process.env.IO_COUNT_DIR ?? '/tmp';
let counts: Counts = fresh();
let cpuAtStart = process.cpuUsage();
let session: Session | null = null;

function fresh(): Counts {
  return { pgStatements: {}, redisCommands: {}, redisRoundTrips: 0 };
}

function bump(map: Record<string, number>, key: string): void {
  map[key] = (map[key] ?? 0) + 1;
}

/** Each text's entry, made once: the regular expression over every statement's whole text, per statement, was ~5 % of the profiled API's CPU. */
const entries = new Map<string, string>();

/** A statement's text without its layout, so that one statement is one entry. */
function statementText(query: unknown): string {
  const text = typeof query === 'string' ? query : ((query as { text?: string } | null)?.text ?? '?');
  let entry = entries.get(text);
  if (entry === undefined) entries.set(text, (entry = text.replace(/\s+/g, ' ').trim().slice(0, 160)));
  return entry;
}

/* eslint-disable @typescript-eslint/no-require-imports */
const pg = require('pg');
const clientQuery = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: unknown, query: unknown, ...rest: unknown[]) {
  bump(counts.pgStatements, statementText(query));
  return clientQuery.call(this, query, ...rest);
};

const ioredis = require('ioredis');
const Redis = ioredis.Redis ?? ioredis.default ?? ioredis;
const sendCommand = Redis.prototype.sendCommand;
Redis.prototype.sendCommand = function (this: unknown, command: any, stream?: unknown, ...rest: unknown[]) {
  if (command?.name) bump(counts.redisCommands, String(command.name));
  // A pipeline's commands are sent with its stream: its exec counted the round trip.
  if (!stream) counts.redisRoundTrips++;
  return sendCommand.call(this, command, stream, ...rest);
};
const Pipeline = require('ioredis/built/Pipeline').default;
const exec = Pipeline.prototype.exec;
Pipeline.prototype.exec = function (this: unknown, ...args: unknown[]) {
  counts.redisRoundTrips++;
  return exec.apply(this, args);
};
/* eslint-enable */

process.on('SIGWINCH', () => {
  if (!session) {
    counts = fresh();
    cpuAtStart = process.cpuUsage();
    session = new Session();
    session.connect();
    // IO_COUNT_PROFILE=0: counts only (the profiler's own sampling costs CPU).
    if (process.env.IO_COUNT_PROFILE !== '0') session.post('Profiler.enable', () => session!.post('Profiler.start'));
    return;
  }
  const cpu = process.cpuUsage(cpuAtStart);
  const written = {
    ...counts,
    cpuMs: (cpu.user + cpu.system) / 1000,
    userMs: cpu.user / 1000,
    systemMs: cpu.system / 1000,
  };
  const done = session;
  session = null;
  done.post('Profiler.stop', (error, result) => {
    if (!error && result) writeFileSync(join(dir, 'api.cpuprofile'), JSON.stringify(result.profile));
    writeFileSync(join(dir, 'counts.json'), JSON.stringify(written, null, 2));
    done.disconnect();
  });
});
