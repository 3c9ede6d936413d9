// `mediajobs listen --forward-to` against the real service: the account's events arrive over
// GET /v1/events/stream (server-sent events) and are POSTed to a local server exactly as a webhook
// delivery, signed so that the reference Standard Webhooks library verifies them; the stream resumes
// after Last-Event-ID.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sdrMp4 } from '../fixtures/media';
import { call, createAccount, startApi, type TestAccount, type TestApi } from '../support/app';
import { upload } from '../support/jobs';
import { eventually, startReceiver, verify, type Receiver } from '../support/webhook-receiver';
import { buildSdk, loadSdk } from './support';

// A region with a heartbeat and no worker: a job submitted there stays queued until cancelled.
const REGION = 'listen';

describe('mediajobs listen and GET /v1/events/stream', () => {
  let api: TestApi;
  let sdkDir: string;
  let receiver: Receiver;
  let listener: ChildProcess | undefined;

  beforeAll(async () => {
    sdkDir = buildSdk();
    api = await startApi({ REGION, STORAGE_DIR: await mkdtemp(join(tmpdir(), 'mj-listen-')) });
    const redis = new (await import('ioredis')).Redis(api.config.redisUrl);
    await redis.zadd(`${api.config.redisPrefix}:workers:${REGION}`, Date.now() + 3600_000, 'test-heartbeat');
    redis.disconnect();
    receiver = await startReceiver();
  });
  afterAll(async () => {
    listener?.kill('SIGKILL');
    await receiver?.stop();
    await api?.close();
    if (sdkDir) rmSync(sdkDir, { recursive: true, force: true });
  });

  /** A job.cancelled event of `account`: submit a job that stays queued, then cancel it. */
  async function cancelledJobEvent(account: TestAccount, uploadId: string): Promise<string> {
    const job = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: account.apiKey,
      body: { inputs: [{ upload_id: uploadId }] },
    });
    expect(job.status).toBe(202);
    await call(api, 'POST', `/v1/sdr2hdr/jobs/${job.body.job_id}/cancel`, { key: account.apiKey });
    const events = await call(api, 'GET', `/v1/events?job_id=${job.body.job_id}`, { key: account.apiKey });
    return events.body.data[0].id as string;
  }

  it('forwards each event to the local URL, signed with the session secret; prints one line per event', async () => {
    const account = await createAccount(api, { plan: 'pro', credits: 1000 });
    const uploadId = await upload(api, account.apiKey, await sdrMp4({ width: 640, height: 360, seconds: 2 }));
    const secret = `whsec_${randomBytes(24).toString('base64')}`;
    let stdout = '';
    let stderr = '';
    const child = spawn(
      process.execPath,
      [join(sdkDir, 'cli.js'), 'listen', '--forward-to', receiver.url('/hooks'), '--secret', secret],
      {
        env: { ...process.env, MEDIAJOBS_API_KEY: account.apiKey, MEDIAJOBS_BASE_URL: api.url },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    listener = child;
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await eventually(() => (stderr.includes('Ready.') ? true : undefined));
    expect(stderr).toContain(`Forwarding this account's events to ${receiver.url('/hooks')}`);
    expect(stderr).toContain(`Signing secret for this session: ${secret}`);

    const eventId = await cancelledJobEvent(account, uploadId);
    const [delivery] = await receiver.waitFor(1, { path: '/hooks' });
    expect(delivery.headers['webhook-id']).toBe(eventId);
    // The reference library verifies it with the secret, and the body is the event as the API has it.
    const verified = verify(secret, delivery);
    const stored = await call(api, 'GET', `/v1/events/${eventId}`, { key: account.apiKey });
    const { object: _object, ...body } = stored.body;
    expect(verified).toEqual(body);
    expect(verified).toMatchObject({ event: 'job.cancelled', data: { error: { code: 'job_cancelled' } } });
    await eventually(() => (stdout.includes(eventId) ? true : undefined));
    expect(stdout).toMatch(
      new RegExp(
        `job\\.cancelled ${eventId} → POST ${receiver.url('/hooks').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\[200\\] \\d+ ms`,
      ),
    );

    // Another account's events never reach this listener.
    const other = await createAccount(api, { plan: 'pro', credits: 1000 });
    await cancelledJobEvent(
      other,
      await upload(api, other.apiKey, await sdrMp4({ width: 640, height: 360, seconds: 2 })),
    );
    const second = await cancelledJobEvent(account, uploadId);
    await receiver.waitFor(2, { path: '/hooks' });
    expect(
      receiver.received.filter((request) => request.path === '/hooks').map((request) => request.headers['webhook-id']),
    ).toEqual([eventId, second]);

    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    listener = undefined;
  }, 60_000);

  it('the stream resumes after Last-Event-ID; without the webhooks scope it is refused', async () => {
    const account = await createAccount(api, { plan: 'pro', credits: 1000 });
    const uploadId = await upload(api, account.apiKey, await sdrMp4({ width: 640, height: 360, seconds: 2 }));
    const first = await cancelledJobEvent(account, uploadId);
    const second = await cancelledJobEvent(account, uploadId);

    const controller = new AbortController();
    const response = await fetch(`${api.url}/v1/events/stream`, {
      headers: { 'x-api-key': account.apiKey, 'last-event-id': first },
      signal: controller.signal,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
    const sdk = loadSdk(sdkDir);
    const events = sdk.parseEventStream(response.body as unknown as AsyncIterable<Uint8Array>);
    const next = (await events.next()).value;
    expect(next).toMatchObject({ id: second, event: 'job.cancelled' });
    expect(JSON.parse(next.data)).toMatchObject({ id: second, data: { job: { job_id: expect.any(String) } } });
    controller.abort();

    const keys = await call(api, 'POST', '/v1/account/api-keys', {
      key: account.apiKey,
      body: { scopes: ['sdr2hdr'] },
    });
    const refused = await call(api, 'GET', '/v1/events/stream', { key: keys.body.key });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('insufficient_scope');
  }, 60_000);

  it('an open stream does not keep the API from shutting down', async () => {
    const account = await createAccount(api, { plan: 'pro', credits: 10 });
    const other = await startApi({ REGION });
    const response = await fetch(`${other.url}/v1/events/stream`, { headers: { 'x-api-key': account.apiKey } });
    expect(response.status).toBe(200);
    const reading = response.text().catch((error: unknown) => String(error));
    await other.close();
    await reading;
  }, 30_000);
});
