// Logs (issue 15): a worker process logs one line when a job starts and one when it ends (ids, api,
// items, status, code, duration, credits) and each webhook attempt's outcome, never a secret; a terminal
// gets readable lines (pino-pretty) and production JSON; a migration run prints one line per migration.
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { MIGRATIONS } from '../../migrations';
import { parseConfig } from '../../src/common/config/config';
import { killAllWorkers, pollUntil, snapshotApp, spawnWorker } from '../support/processes';
import { ensureBuilt, ROOT } from '../support/dist-build';
import { call, createAccount, startApi, type TestApi } from '../support/app';
import { upload, waitForJob } from '../support/jobs';
import { adminQuery } from '../support/global-setup';
import { registerEndpoint, startReceiver, type Receiver } from '../support/webhook-receiver';
import { clipOfDuration } from '../fixtures/media';

const exec = promisify(execFile);

type Line = Record<string, unknown> & { msg?: string };

function jsonLines(text: string): Line[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Line);
}

function isAttemptAt(line: Line, endpointId: string): boolean {
  return line.msg === 'webhook attempt' && line.endpoint_id === endpointId;
}

describe('worker logs of a job and its webhook', () => {
  let api: TestApi;
  let dir: string;
  let receiver: Receiver;
  const region = `logs${process.pid}`;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mj-logs-'));
    const env = { STORAGE_DIR: join(dir, 'storage'), REGION: region, WEBHOOK_RETRY_SCHEDULE: '0,1' };
    api = await startApi(env);
    receiver = await startReceiver({ status: 503 });
    spawnWorker(
      {
        ...env,
        PUBLIC_BASE_URL: api.config.publicBaseUrl,
        DOCS_URL: api.config.docsUrl,
        LOG_LEVEL: 'info',
        LOG_FORMAT: 'json',
        METRICS_TOKEN: 'a-metrics-token-never-logged',
      },
      { app: await snapshotApp(dir), logFile: join(dir, 'worker.log') },
    );
  }, 180_000);

  afterAll(async () => {
    await killAllWorkers();
    await receiver?.stop();
    await api?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('"job started" and "job ended" lines with ids, counts, status, code, duration and credits; webhook attempts with their outcome; no secret', async () => {
    const account = await createAccount(api, { credits: 1000 });
    const endpoint = await registerEndpoint(api, account.apiKey, receiver.url('/hook?token=receiver-secret-in-url'), [
      'job.succeeded',
    ]);
    // The worker must be up (its heartbeat makes the region healthy) before the submit.
    const uploadId = await upload(api, account.apiKey, await clipOfDuration(2));
    const submitted = await pollUntil(
      'a submit the region accepts',
      async () => {
        const response = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
          key: account.apiKey,
          body: { inputs: [{ upload_id: uploadId }], region },
        });
        return response.status === 202 ? response : undefined;
      },
      60_000,
      500,
    );
    const jobId = submitted.body.job_id as string;
    const requestId = submitted.headers.get('x-request-id');
    const job = await waitForJob(api, account.apiKey, `/v1/sdr2hdr/jobs/${jobId}`, undefined, 120_000);
    expect(job.status).toBe('succeeded');

    const lines = await pollUntil(
      'the webhook retried and delivered, both logged',
      async () => {
        const found = jsonLines(await readFile(join(dir, 'worker.log'), 'utf8'));
        return found.filter((line) => isAttemptAt(line, endpoint.id)).length >= 2 ? found : undefined;
      },
      30_000,
      300,
    );
    const started = lines.find((line) => line.msg === 'job started' && line.job_id === jobId);
    expect(started).toMatchObject({ job_id: jobId, request_id: requestId, api: 'sdr2hdr', region, items: 1 });
    const ended = lines.find((line) => line.msg === 'job ended' && line.job_id === jobId);
    expect(ended).toMatchObject({
      job_id: jobId,
      request_id: requestId,
      api: 'sdr2hdr',
      items: 1,
      failed_items: 0,
      status: 'succeeded',
      code: null,
      charged_credits: job.billing.charged_credits,
      held_credits: job.billing.estimated_credits,
    });
    expect(ended!.duration_ms).toEqual(expect.any(Number));
    // Only this endpoint's attempts: in a serial run the database is shared with the files before this one, and
    // a delivery they left pending (to a receiver that has since stopped) may be attempted by this worker too.
    const attempts = lines.filter((line) => isAttemptAt(line, endpoint.id));
    expect(attempts.map((line) => [line.attempt, line.status, line.outcome, line.state])).toEqual([
      [1, 503, '5xx', 'pending'],
      [2, 200, '2xx', 'delivered'],
    ]);
    expect(attempts[0]).toMatchObject({ endpoint_id: endpoint.id, duration_ms: expect.any(Number) });

    const text = await readFile(join(dir, 'worker.log'), 'utf8');
    for (const secret of [
      account.apiKey,
      endpoint.secret,
      endpoint.secret.replace(/^whsec_/, ''),
      'receiver-secret-in-url',
      'a-metrics-token-never-logged',
      api.config.adminToken!,
      api.config.assetUrlSecret,
    ])
      expect(text).not.toContain(secret);
  });
});

describe('log format', () => {
  it('LOG_FORMAT: pretty or json; production and non-terminals default to JSON', () => {
    expect(parseConfig({ ...process.env, LOG_FORMAT: 'pretty' }).logFormat).toBe('pretty');
    expect(parseConfig({ ...process.env, LOG_FORMAT: '' }).logFormat).toBe('json'); // Jest's stdout is no TTY
    expect(() => parseConfig({ ...process.env, LOG_FORMAT: 'xml' })).toThrow(/LOG_FORMAT must be json or pretty/);
  });

  it('pretty lines are readable (time, level, name, message, fields), not JSON', async () => {
    ensureBuilt('dist/src/common/logger.js');
    const script = `require('./dist/src/common/logger').createLogger({ logLevel: 'info', logFormat: 'pretty' }, 'worker')
      .info({ job_id: 'job_pretty', context: 'JobProcessor' }, 'job started')`;
    const { stdout } = await exec(process.execPath, ['-e', script], {
      cwd: ROOT,
      env: { ...process.env, FORCE_COLOR: '' },
    });
    expect(stdout).toMatch(
      /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO \(worker\): \[JobProcessor\] job started\n\s+job_id: "job_pretty"/,
    );
  });

  it('a request is one pretty line: method, URL (credentials redacted), status and time', async () => {
    ensureBuilt('dist/src/common/logger.js');
    const script = `const { createLogger, registerRequestLog } = require('./dist/src/common/logger');
      const fastify = require('fastify')();
      registerRequestLog(fastify, createLogger({ logLevel: 'info', logFormat: 'pretty' }, 'api'));
      fastify.get('/v1/things', async () => ({ ok: true }));
      fastify.inject({ method: 'GET', url: '/v1/things?api_key=mjk_secret' }).then(() => fastify.close());`;
    const { stdout } = await exec(process.execPath, ['-e', script], {
      cwd: ROOT,
      env: { ...process.env, FORCE_COLOR: '' },
    });
    expect(stdout).toMatch(
      /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO \(api\): GET \/v1\/things\?api_key=\[redacted\] 200 \d+ ms\n$/,
    );
  });

  it('`npm run dev` (scripts/dev-run.js) asks for readable logs on a terminal and through a pipe; LOG_FORMAT set by hand wins', async () => {
    // `env` as the one command concurrently runs: it prints the environment the API and worker would get.
    const probe = ['--raw', 'env'];
    const piped = await exec(process.execPath, [join(ROOT, 'scripts/dev-run.js'), ...probe], {
      env: { ...process.env, LOG_FORMAT: '', FORCE_COLOR: '' },
    });
    expect(piped.stdout).toContain('LOG_FORMAT=pretty');
    expect(piped.stdout).not.toMatch(/^FORCE_COLOR=1$/m); // no colour codes into a file or a pipe
    // `script` gives the command a pseudo-terminal, as a developer's shell would.
    const command = [process.execPath, join(ROOT, 'scripts/dev-run.js'), ...probe].join(' ');
    const tty = await exec('script', ['-qec', command, '/dev/null'], { env: { ...process.env, LOG_FORMAT: '' } });
    expect(tty.stdout).toContain('LOG_FORMAT=pretty');
    const chosen = await exec(process.execPath, [join(ROOT, 'scripts/dev-run.js'), ...probe], {
      env: { ...process.env, LOG_FORMAT: 'json' },
    });
    expect(chosen.stdout).toContain('LOG_FORMAT=json');
  });

  /** What the built API prints from its start until it listens, with the environment `npm run dev` gives it. */
  async function startUpOutput(logLevel: string): Promise<string> {
    const main = ensureBuilt('dist/src/main.js');
    const port = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port: free } = server.address() as AddressInfo;
        server.close(() => resolve(free));
      });
    });
    const child = spawn(process.execPath, [main], {
      cwd: ROOT,
      env: {
        ...process.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        LOG_FORMAT: 'pretty',
        LOG_LEVEL: logLevel,
        FORCE_COLOR: '',
      },
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    try {
      await pollUntil('the API to listen', () => output.includes('listening on') || child.exitCode !== null, 60_000);
      // Whatever follows the listening line at once belongs to the start-up too.
      await new Promise((resolve) => setTimeout(resolve, 500));
    } finally {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    return output;
  }

  it('the API starts with a short, readable start-up: where it listens, the dashboard and the docs; routes at debug', async () => {
    const info = await startUpOutput('info');
    const lines = info.trimEnd().split('\n');
    expect(info).toMatch(/mediajobs API listening on http:\/\/127\.0\.0\.1:\d+/);
    expect(info).toMatch(/dashboard: http:\/\/127\.0\.0\.1:\d+\/dashboard/);
    expect(info).toMatch(/docs: http:\/\/127\.0\.0\.1:\d+\/docs/);
    expect(info).not.toContain('Mapped {');
    expect(info).not.toMatch(/^\{"level"/m);
    expect(lines.length).toBeLessThanOrEqual(10);

    const debug = await startUpOutput('debug');
    expect(debug.match(/Mapped \{/g)?.length ?? 0).toBeGreaterThan(50);
  }, 180_000);
});

describe('migration output', () => {
  const name = `${process.env.TEST_DATABASE}_migrate`;
  afterAll(() => adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));

  it('one line per migration applied, no SQL; a second run says nothing is pending', async () => {
    ensureBuilt('dist/src/data-source.js');
    await adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await adminQuery(`CREATE DATABASE "${name}"`);
    const run = () =>
      exec(process.execPath, ['node_modules/typeorm/cli.js', 'migration:run', '-d', 'dist/src/data-source.js'], {
        cwd: ROOT,
        env: { ...process.env, DATABASE_URL: `postgres://postgres@127.0.0.1:5432/${name}` },
      });
    const first = await run();
    const lines = first.stdout.trim().split('\n');
    expect(lines).toEqual(MIGRATIONS.map((migration) => `migration ${migration.name} applied`));
    expect(first.stdout + first.stderr).not.toMatch(/CREATE TABLE|query:/i);
    const second = await run();
    expect(second.stdout.trim()).toBe('No migrations are pending');
  });
});
