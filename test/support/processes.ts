// Helpers for real processes and private services: worker processes killed with
// SIGKILL (own process group, ffmpeg dies with them), a private redis-server and a private PostgreSQL
// cluster that a test may kill and restart without touching the machine's shared servers, a webhook
// receiver that can be down in several ways, bounded HTTP calls, and the money checks of a finished run.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { copyFile, cp, mkdir, rm, symlink } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { Webhook } from 'standardwebhooks';
import { DataSource } from 'typeorm';
import { migrateDatabase } from '../../migrations';
import { auditMoneyAt } from '../../src/billing/money-audit';
import { openJobStatuses } from '../../src/jobs/job-lifecycle';
import { ensureBuilt, ROOT } from './dist-build';
import { freePort, type TestApi } from './app';
import { isAlive } from './pids';
import { usageDaysKept, usageSummedFromRows } from './usage-days';

const exec = promisify(execFile);

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** One line of JSON in the test output, so a run's measurements can be grepped and compared. */
export function logMeasurement(name: string, data: Record<string, unknown>): void {
  console.log(JSON.stringify({ chaos: name, ...data }));
}

/**
 * Polls `probe` every `everyMs` until it returns a value other than undefined/false; throws after `timeoutMs`.
 * `what` may be a function, read at the timeout, so the error can say what was still missing.
 */
export async function pollUntil<T>(
  what: string | (() => string),
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs: number,
  everyMs = 200,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for: ${typeof what === 'function' ? what() : what}`);
    }
    await sleep(everyMs);
  }
}

// ---------------------------------------------------------------------------------------------------
// Bounded HTTP calls
// ---------------------------------------------------------------------------------------------------

export interface TimedResponse {
  method: string;
  path: string;
  /** 0 when no HTTP answer came at all (connection error or client-side timeout). */
  status: number;
  body: any;
  headers: Headers | null;
  ms: number;
  startedAt: number;
  networkError: string | null;
}

/** One request with a hard client-side timeout; never throws, so a load loop can record every outcome. */
export async function timedCall(
  baseUrl: string,
  method: string,
  path: string,
  options: { key?: string; body?: unknown; headers?: Record<string, string>; timeoutMs?: number } = {},
): Promise<TimedResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers['x-api-key'] = options.key;
  let body: string | undefined;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] = 'application/json';
  }
  const startedAt = Date.now();
  try {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers,
      body,
      signal: AbortSignal.timeout(options.timeoutMs ?? 15_000),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // not JSON: keep the text (and let the assertions say so)
    }
    return {
      method,
      path,
      status: response.status,
      body: parsed,
      headers: response.headers,
      ms: Date.now() - startedAt,
      startedAt,
      networkError: null,
    };
  } catch (error) {
    return {
      method,
      path,
      status: 0,
      body: null,
      headers: null,
      ms: Date.now() - startedAt,
      startedAt,
      networkError: String((error as Error).message ?? error),
    };
  }
}

// ---------------------------------------------------------------------------------------------------
// Worker processes
// ---------------------------------------------------------------------------------------------------

export interface WorkerProcess {
  readonly child: ChildProcess;
  /** Also the process group id: the worker leads its own group. */
  readonly pid: number;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILL to the whole group (the worker and its ffmpeg children), like a container being killed. */
  kill(): Promise<void>;
  /** Throws (with the end of its log) when the worker exited without being told to, e.g. a crash at start-up. */
  assertAlive(): void;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /(?<!\.spec|\.d)\.ts$/.test(entry.name) ? [path] : [];
  });
}

/**
 * A private copy of the built service (dist/, with node_modules linked) for the worker processes of one
 * test file, taken once the build is complete: a `npm run build` elsewhere (it starts with rm -rf dist)
 * cannot pull the code from under a worker restarted mid-test.
 */
export async function snapshotApp(into: string): Promise<string> {
  const app = join(into, 'app');
  const expected = sourceFiles(join(ROOT, 'src')).map((file) =>
    join(app, 'dist', relative(ROOT, file).replace(/\.ts$/, '.js')),
  );
  return pollUntil(
    'a complete build in dist/ to copy',
    async () => {
      try {
        ensureBuilt('dist/src/worker.js');
        await rm(app, { recursive: true, force: true });
        await mkdir(app, { recursive: true });
        await cp(join(ROOT, 'dist'), join(app, 'dist'), { recursive: true });
        await copyFile(join(ROOT, 'package.json'), join(app, 'package.json'));
        await symlink(join(ROOT, 'node_modules'), join(app, 'node_modules'), 'dir');
      } catch {
        return undefined; // a build in progress: try again
      }
      return expected.every((file) => existsSync(file)) ? app : undefined;
    },
    120_000,
    1000,
  );
}

/** Every worker this test file started and has not killed; none may start once the file tears down. */
const liveWorkers = new Set<WorkerProcess>();
let workersClosed = false;

/**
 * For afterAll: kills every worker still running and refuses new ones, so a test body that outlives its
 * timeout cannot leave a worker behind (nor keep Jest alive waiting for it).
 */
export async function killAllWorkers(): Promise<void> {
  workersClosed = true;
  await Promise.all([...liveWorkers].map((worker) => worker.kill()));
}

/**
 * For afterAll: runs every clean-up step, one after another, even when one fails (a failure must not
 * leave a private server behind), then throws the first failure.
 */
export async function cleanUpEach(steps: (() => Promise<unknown> | undefined)[]): Promise<void> {
  const failures: unknown[] = [];
  for (const step of steps) await Promise.resolve(step()).catch((error: unknown) => failures.push(error));
  if (failures.length) throw failures[0];
}

/**
 * `node dist/src/worker.js` (of `app`, a snapshotApp() copy, or the repository) as its own process group,
 * with the test environment plus `env`; logs to `logFile` when given.
 */
export function spawnWorker(
  env: Record<string, string>,
  options: { logFile?: string; app?: string } = {},
): WorkerProcess {
  const { logFile, app = ROOT } = options;
  if (workersClosed) throw new Error('no worker may start after killAllWorkers() (the test file is tearing down)');
  const fd = logFile ? openSync(logFile, 'a') : undefined;
  const child = spawn(process.execPath, [join(app, 'dist/src/worker.js')], {
    cwd: app,
    env: { ...process.env, LOG_LEVEL: logFile ? 'warn' : 'silent', ...env },
    detached: true,
    stdio: fd === undefined ? 'ignore' : ['ignore', fd, fd],
  });
  if (fd !== undefined) closeSync(fd);
  if (!child.pid) throw new Error('the worker process did not start');
  const pid = child.pid;
  let told = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null)
      resolve({ code: child.exitCode, signal: child.signalCode });
    else child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  const kill = async (): Promise<void> => {
    told = true;
    killGroup(pid);
    await exited;
    // ffmpeg children are in the group too; wait until none is left, so a kill is a kill.
    await pollUntil(
      'the killed worker group to be gone',
      async () => (await groupProcesses(pid)).length === 0,
      10_000,
      50,
    );
    liveWorkers.delete(worker);
  };
  const worker: WorkerProcess = {
    child,
    pid,
    exited,
    kill,
    assertAlive: () => {
      if (told || (child.exitCode === null && child.signalCode === null)) return;
      const log = logFile && existsSync(logFile) ? readFileSync(logFile, 'utf8').slice(-2000) : '(no log)';
      throw new Error(`worker ${pid} exited by itself (${child.exitCode ?? child.signalCode}); log tail:\n${log}`);
    },
  };
  liveWorkers.add(worker);
  return worker;
}

export function killGroup(pgid: number): void {
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch (error) {
    // Already gone: nothing left to kill.
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

export interface ProcessInfo {
  pid: number;
  pgid: number;
  comm: string;
  args: string;
}

/** Live processes of a process group (zombies excluded). */
export async function groupProcesses(pgid: number): Promise<ProcessInfo[]> {
  const { stdout } = await exec('ps', ['-eo', 'pid=,pgid=,stat=,comm=,args='], { maxBuffer: 8 * 1024 * 1024 });
  const found: ProcessInfo[] = [];
  for (const line of stdout.split('\n')) {
    const match = /^\s*(\d+)\s+(\d+)\s+(\S+)\s+(\S+)\s+(.*)$/.exec(line);
    if (!match || Number(match[2]) !== pgid || match[3].startsWith('Z')) continue;
    found.push({ pid: Number(match[1]), pgid: Number(match[2]), comm: match[4], args: match[5] });
  }
  return found;
}

/** Job ids whose ffmpeg runs in the group right now (the work directory in its arguments names the job). */
export async function jobsInFfmpeg(pgid: number): Promise<string[]> {
  const ids = new Set<string>();
  for (const process of await groupProcesses(pgid)) {
    if (process.comm !== 'ffmpeg') continue;
    const match = /mediajobs-(job_[0-9A-Za-z]+)-/.exec(process.args);
    if (match) ids.add(match[1]);
  }
  return [...ids];
}

// ---------------------------------------------------------------------------------------------------
// A private redis-server (never the shared one on 6379)
// ---------------------------------------------------------------------------------------------------

/** Answers true when something on the port says +PONG to PING within `timeoutMs`. */
function pingRedis(port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket: Socket = connect(port, '127.0.0.1');
    let answer = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      answer += chunk.toString();
      if (answer.includes('\r\n')) done(answer.startsWith('+PONG'));
    });
  });
}

/** A redis-server child on a free loopback port that keeps nothing on disk: a restart loses every key. */
export class PrivateRedis {
  private child?: ChildProcess;
  private exited?: Promise<void>;
  private disposed = false;

  private constructor(readonly port: number) {}

  static async start(): Promise<PrivateRedis> {
    const redis = new PrivateRedis(await freePort());
    await redis.start();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.child !== undefined;
  }

  /** Starts (again) on the same port; resolves once it answers PING. */
  async start(): Promise<void> {
    if (this.child) return;
    for (let attempt = 0; ; attempt++) {
      if (this.disposed) throw new Error('this private Redis was disposed (the test file is tearing down)');
      const child = spawn(
        'redis-server',
        [
          '--port',
          String(this.port),
          '--bind',
          '127.0.0.1',
          '--save',
          '',
          '--appendonly',
          'no',
          '--loglevel',
          'warning',
        ],
        { stdio: 'ignore' },
      );
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      let gone = false;
      void exited.then(() => (gone = true));
      const up = await pollUntil(
        `redis-server on port ${this.port} to answer`,
        async () => (gone ? 'exited' : (await pingRedis(this.port)) ? 'up' : undefined),
        10_000,
        50,
      );
      if (up === 'up') {
        this.child = child;
        this.exited = exited;
        return;
      }
      // Exited at once: the port was still held a moment after a kill. Try again, a few times.
      if (attempt >= 20) throw new Error(`redis-server would not start on port ${this.port}`);
      await sleep(100);
    }
  }

  /** For afterAll: killed for good; start() refuses from now on, so no redis-server outlives the file. */
  async dispose(): Promise<void> {
    this.disposed = true;
    await this.kill();
  }

  /** SIGKILL: every connection drops, every key is lost (no persistence). */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.child = undefined;
    child.kill('SIGKILL');
    await this.exited;
  }
}

// ---------------------------------------------------------------------------------------------------
// A private PostgreSQL cluster (never the shared main cluster)
// ---------------------------------------------------------------------------------------------------

const PG_VERSION = '15';

/** Drops the chaos clusters of test processes that are gone (a run killed before its afterAll). */
async function dropStaleClusters(): Promise<void> {
  const { stdout } = await exec('pg_lsclusters', ['--no-header']).catch(() => ({ stdout: '' }));
  for (const line of stdout.split('\n')) {
    const [version, name] = line.trim().split(/\s+/);
    const pid = Number(/^mjchaos_(\d+)$/.exec(name ?? '')?.[1]);
    if (!pid || pid === process.pid || isAlive(pid)) continue;
    await exec('pg_dropcluster', ['--stop', version, name]).catch(() => undefined);
  }
}

/**
 * `pg_createcluster 15 mjchaos_<pid>` on a free loopback port (trust auth), with the `mediajobs`
 * database migrated. `drop()` must run in afterAll, whatever happened.
 */
export class PrivateCluster {
  private constructor(
    readonly name: string,
    readonly port: number,
  ) {}

  static async create(database = 'mediajobs'): Promise<PrivateCluster> {
    await dropStaleClusters();
    const cluster = new PrivateCluster(`mjchaos_${process.pid}`, await freePort());
    await exec('pg_dropcluster', ['--stop', PG_VERSION, cluster.name]).catch(() => undefined);
    await exec(
      'pg_createcluster',
      [PG_VERSION, cluster.name, '-p', String(cluster.port), '--start', '--', '--auth=trust'],
      { timeout: 120_000 },
    );
    await cluster.waitUntilAccepting();
    const admin = new Client({ connectionString: cluster.url('postgres') });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE "${database}"`);
    } finally {
      await admin.end();
    }
    await migrateDatabase(cluster.url(database));
    return cluster;
  }

  url(database = 'mediajobs'): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  /** `immediate` is a crash (no checkpoint, clients cut); `fast` a clean stop that still cuts every client. */
  async stop(mode: 'immediate' | 'fast' = 'immediate'): Promise<void> {
    await exec('pg_ctlcluster', ['-m', mode, PG_VERSION, this.name, 'stop'], { timeout: 60_000 });
  }

  async start(): Promise<void> {
    await exec('pg_ctlcluster', [PG_VERSION, this.name, 'start'], { timeout: 60_000 });
    await this.waitUntilAccepting();
  }

  async drop(): Promise<void> {
    await exec('pg_dropcluster', ['--stop', PG_VERSION, this.name], { timeout: 60_000 });
  }

  private async waitUntilAccepting(): Promise<void> {
    await pollUntil(
      `cluster ${this.name} to accept connections`,
      async () => {
        const client = new Client({ connectionString: this.url('postgres'), connectionTimeoutMillis: 1000 });
        try {
          await client.connect();
          await client.query('SELECT 1');
          return true;
        } catch {
          return false;
        } finally {
          await client.end().catch(() => undefined);
        }
      },
      30_000,
      100,
    );
  }
}

// ---------------------------------------------------------------------------------------------------
// A webhook receiver that can be down in several ways
// ---------------------------------------------------------------------------------------------------

/** What the receiver does with one request once it has read it: answer 204, answer 500, or drop the connection. */
export type SinkAnswer = 'ok' | 'error500' | 'reset';

export interface SinkRequest {
  at: number;
  headers: Record<string, string>;
  body: string;
  answer: SinkAnswer;
}

export class WebhookSink {
  readonly requests: SinkRequest[] = [];
  /** Decides each answer; may look at what was received before (e.g. "reset the first time"). */
  policy: (request: Omit<SinkRequest, 'answer'>) => SinkAnswer = () => 'ok';
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  port = 0;

  static async start(): Promise<WebhookSink> {
    const sink = new WebhookSink();
    await sink.open();
    return sink;
  }

  url(path = '/hooks/mediajobs'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  get isOpen(): boolean {
    return this.server !== undefined;
  }

  /** Listens (again, on the same port after close()). */
  async open(): Promise<void> {
    if (this.server) return;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const received = {
          at: Date.now(),
          headers: Object.fromEntries(
            Object.entries(req.headers as IncomingHttpHeaders).map(([name, value]) => [name, String(value)]),
          ),
          body: Buffer.concat(chunks).toString('utf8'),
        };
        const answer = this.policy(received);
        this.requests.push({ ...received, answer });
        if (answer === 'reset') req.socket.resetAndDestroy();
        else if (answer === 'error500') res.writeHead(500, { 'content-type': 'text/plain' }).end('boom');
        else res.writeHead(204).end();
      });
    });
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    for (let attempt = 0; ; attempt++) {
      try {
        await new Promise<void>((resolve, reject) => {
          server.once('error', reject);
          server.listen(this.port, '127.0.0.1', () => {
            server.off('error', reject);
            resolve();
          });
        });
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt >= 40) throw error;
        await sleep(50);
      }
    }
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
  }

  /** The port stops listening (connections refused) and every open connection is dropped. */
  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }

  /** Verifies every received request with the reference library (throws on the first bad one). */
  verifyAll(secret: string): { id: string; event: string; jobId: string; error: unknown }[] {
    const webhook = new Webhook(secret);
    return this.requests.map((request) => {
      const payload = webhook.verify(request.body, request.headers) as {
        id: string;
        event: string;
        data: { job: { job_id: string }; error: unknown };
      };
      if (payload.id !== request.headers['webhook-id'])
        throw new Error(`webhook-id ${request.headers['webhook-id']} is not the body's id ${payload.id}`);
      return { id: payload.id, event: payload.event, jobId: payload.data.job.job_id, error: payload.data.error };
    });
  }

  /** webhook-ids that got a 2xx from this receiver. */
  delivered(): Set<string> {
    return new Set(this.requests.filter((request) => request.answer === 'ok').map((r) => r.headers['webhook-id']));
  }
}

// ---------------------------------------------------------------------------------------------------
// What a customer can read back: every page of a list
// ---------------------------------------------------------------------------------------------------

export async function listAll(api: TestApi, key: string, path: string): Promise<any[]> {
  const all: any[] = [];
  let cursor: string | null = null;
  for (;;) {
    const separator = path.includes('?') ? '&' : '?';
    const page = await timedCall(
      api.url,
      'GET',
      `${path}${separator}limit=100${cursor ? `&starting_after=${cursor}` : ''}`,
      { key },
    );
    if (page.status !== 200) throw new Error(`GET ${path}: ${page.status} ${JSON.stringify(page.body)}`);
    all.push(...page.body.data);
    if (!page.body.has_more) return all;
    cursor = page.body.next_cursor;
  }
}

const TERMINAL = new Set(['succeeded', 'partially_succeeded', 'failed', 'cancelled']);

export function isTerminal(status: string): boolean {
  return TERMINAL.has(status);
}

export interface MoneyReport {
  jobs: number;
  byStatus: Record<string, number>;
  chargedTotal: number;
  problems: string[];
}

/**
 * The money of an account whose jobs have all ended, as the customer reads it (job views, ledger,
 * balance) and as the database holds it. The invariants themselves (balance = grants − captures,
 * reserved = open holds, open_jobs, one authorise and one settlement per job capturing its charge,
 * charge = the items' sum) are the operators' audit's (src/billing/money-audit.ts, `npm run admin --
 * audit-money`), run here on the account; this adds what a customer reads: each view's billing block
 * fits its status (succeeded: every item charged its actual usage; failed: 0 and released; cancelled:
 * the items delivered before the cancel, settled when that is anything, else released), the views'
 * charges add up to the ledger's captures, nothing is left held and the grants are the test's.
 * Returns the problems found, for one readable assertion.
 */
export async function auditMoney(api: TestApi, key: string, jobs: any[], grantedCredits: number): Promise<MoneyReport> {
  const problems: string[] = [];
  const byStatus: Record<string, number> = {};
  const ledger = await listAll(api, key, '/v1/account/ledger');
  let chargedTotal = 0;
  for (const job of jobs) {
    byStatus[job.status] = (byStatus[job.status] ?? 0) + 1;
    const id = job.job_id as string;
    const billing = job.billing;
    const itemsCharged = (job.items as any[]).reduce((sum, item) => sum + item.charged_credits, 0);
    const itemsEstimated = (job.items as any[]).reduce((sum, item) => sum + item.estimated_credits, 0);
    if (!isTerminal(job.status)) problems.push(`${id}: not terminal (${job.status})`);
    if (billing.estimated_credits !== itemsEstimated)
      problems.push(`${id}: estimated ${billing.estimated_credits} ≠ items' ${itemsEstimated}`);
    if (billing.charged_credits !== itemsCharged)
      problems.push(`${id}: charged ${billing.charged_credits} ≠ items' ${itemsCharged}`);
    if (billing.charged_credits > billing.estimated_credits)
      problems.push(`${id}: charged ${billing.charged_credits} > estimated ${billing.estimated_credits}`);
    if (billing.refunded !== (billing.state === 'released'))
      problems.push(`${id}: refunded ${billing.refunded} with state ${billing.state}`);
    if (job.status === 'succeeded') {
      if (billing.state !== 'settled') problems.push(`${id}: succeeded but billing ${JSON.stringify(billing)}`);
      for (const item of job.items as any[]) {
        // Every item of a succeeded job ran to its end: the actual usage of the whole clip, i.e. its estimate.
        if (item.status !== 'succeeded' || item.charged_credits !== item.estimated_credits)
          problems.push(
            `${id}: item ${item.index} ${item.status} charged ${item.charged_credits}/${item.estimated_credits}`,
          );
      }
    } else if (job.status === 'failed') {
      if (billing.charged_credits !== 0 || billing.state !== 'released')
        problems.push(`${id}: failed but billing ${JSON.stringify(billing)}`);
    } else if (job.status === 'cancelled') {
      const delivered = (job.items as any[]).filter((item) => item.status === 'succeeded');
      const deliveredCharge = delivered.reduce((sum, item) => sum + item.charged_credits, 0);
      if (
        billing.charged_credits !== deliveredCharge ||
        billing.state !== (deliveredCharge > 0 ? 'settled' : 'released')
      )
        problems.push(`${id}: cancelled with ${deliveredCharge} delivered but billing ${JSON.stringify(billing)}`);
      for (const item of job.items as any[])
        if (item.status !== 'succeeded' && item.charged_credits !== 0)
          problems.push(`${id}: item ${item.index} ${item.status} but charged ${item.charged_credits}`);
    }
    chargedTotal += billing.charged_credits;
  }

  const sum = (kind: string) =>
    ledger.filter((entry) => entry.kind === kind).reduce((total, entry) => total + entry.credits, 0);
  const grants = sum('grant');
  if (grants !== grantedCredits) problems.push(`grants ${grants} ≠ ${grantedCredits}`);
  const listed = new Set(jobs.map((job) => job.job_id as string));
  const unlisted = ledger.filter((entry) => entry.job_id && !listed.has(entry.job_id));
  if (unlisted.length > 0)
    problems.push(`ledger entries for jobs not in the list: ${[...new Set(unlisted.map((e) => e.job_id))].join(', ')}`);
  if (sum('capture') !== chargedTotal) problems.push(`captures ${sum('capture')} ≠ the views' charges ${chargedTotal}`);
  const balance = await timedCall(api.url, 'GET', '/v1/account/credits', { key });
  if (balance.status !== 200) problems.push(`credits: ${balance.status}`);
  else {
    if (balance.body.reserved_credits !== 0) problems.push(`reserved_credits ${balance.body.reserved_credits} ≠ 0`);
    // Every job ended: none is left counted against the concurrency limit (accounts.open_jobs).
    if (balance.body.running_jobs !== 0) problems.push(`running_jobs ${balance.body.running_jobs} ≠ 0`);
    if (balance.body.available_credits !== balance.body.balance_credits)
      problems.push(`available ${balance.body.available_credits} ≠ balance ${balance.body.balance_credits}`);
  }
  if (jobs.length > 0) {
    const db = api.app.get(DataSource);
    const [owner] = await db.query(`SELECT account_id FROM jobs WHERE id = $1`, [jobs[0].job_id]);
    // The invariants, as the operators' audit checks them (one owner of the rules).
    for (const problem of await auditMoneyAt(api.config.databaseUrl, openJobStatuses(), [owner.account_id]))
      problems.push(`${problem.subject} ${problem.id}: ${problem.rule} ${JSON.stringify(problem.numbers)}`);
    // The per-day usage the balance, the chart and the limits read (account_usage_days) is the rows' own sum.
    const since = new Date(Date.now() - 40 * 86_400_000);
    const [kept, summed] = await Promise.all([
      usageDaysKept(db, owner.account_id, since),
      usageSummedFromRows(db, owner.account_id, since),
    ]);
    if (JSON.stringify(kept) !== JSON.stringify(summed))
      problems.push(`account_usage_days ${JSON.stringify(kept)} ≠ the rows' sums ${JSON.stringify(summed)}`);
  }
  return { jobs: jobs.length, byStatus, chargedTotal, problems };
}
