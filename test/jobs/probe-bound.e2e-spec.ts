// Submit-time ffprobe is bounded per API instance and dies with its client (issue 12 item 9): submits
// abandoned against a slow source leave no ffprobe behind, no more than MAX_CONCURRENT_PROBES run at
// once, and a submit that finds no free slot gets a retryable 503 envelope with Retry-After.
import { readdir, readFile } from 'node:fs/promises';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sdrMp4 } from '../fixtures/media';
import { markRegionHealthy } from '../support/chaos-accounts';
import { sleep } from '../support/processes';
import { call, createAccount, startApi, type TestAccount, type TestApi } from '../support/app';
import { startMediaOrigin, type MediaOrigin } from '../support/media-origin';

const REGION = 'probe-bound';
const BOUND = 4;

/**
 * ffprobe processes that are children of this test process (the API runs in it) reading a source URL
 * (through the API's pinned proxy: `http://127.0.0.1:<port>/<secret>/source…`), from /proc.
 */
async function ffprobeChildren(): Promise<number[]> {
  const found: number[] = [];
  for (const task of await readdir(`/proc/${process.pid}/task`)) {
    const children = await readFile(`/proc/${process.pid}/task/${task}/children`, 'utf8').catch(() => '');
    for (const pid of children.split(' ').filter(Boolean)) {
      const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
      const close = stat.lastIndexOf(')');
      if (stat.slice(stat.indexOf('(') + 1, close) !== 'ffprobe' || stat[close + 2] === 'Z') continue;
      const args = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
      if (/http:\/\/127\.0\.0\.1:\d+\/[0-9a-f]{32}\/source/.test(args)) found.push(Number(pid));
    }
  }
  return found;
}

/** A source host that accepts every request and never answers it. */
async function startSilentOrigin(): Promise<{ url(name: string): string; close(): Promise<void> }> {
  const held = new Set<ServerResponse>();
  const sockets = new Set<Socket>();
  const server: Server = createServer((_request, response) => void held.add(response));
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (name) => `http://127.0.0.1:${port}/${name}`,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('submit-time probes', () => {
  let api: TestApi;
  let account: TestAccount;
  let silent: Awaited<ReturnType<typeof startSilentOrigin>>;
  let origin: MediaOrigin;

  beforeAll(async () => {
    api = await startApi({
      REGION,
      STORAGE_DIR: await mkdtemp(join(tmpdir(), 'mj-probe-')),
      MAX_CONCURRENT_PROBES: String(BOUND),
      // One account may take every slot here: these tests are about the instance's bound.
      MAX_PROBES_PER_ACCOUNT: String(BOUND),
    });
    await markRegionHealthy(api, REGION);
    account = await createAccount(api, { plan: 'enterprise', credits: 1000 });
    silent = await startSilentOrigin();
    origin = await startMediaOrigin();
    origin.serve('good.mp4', await sdrMp4({ width: 160, height: 90, seconds: 1 }));
    // The key's first use (hashed, then cached) is not what these tests time.
    expect((await call(api, 'GET', '/v1/account/credits', { key: account.apiKey })).status).toBe(200);
  });
  afterAll(async () => {
    await silent?.close();
    await origin?.close();
    // Connections of the abandoned requests are not this test's subject: do not wait for their keep-alive.
    api?.app.getHttpServer().closeAllConnections();
    await api?.close();
  });

  afterEach(async () => {
    // No test leaves a probe for the next one.
    await waitForNoProbes();
  });

  async function waitForNoProbes(): Promise<number[]> {
    const deadline = Date.now() + 8000;
    for (;;) {
      const left = await ffprobeChildren();
      if (left.length === 0 || Date.now() > deadline) return left;
      await sleep(100);
    }
  }

  function submit(url: string, signal: AbortSignal, key = account.apiKey): Promise<Response> {
    return fetch(`${api.url}/v1/sdr2hdr/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({ inputs: [{ source_url: url }] }),
      signal,
    });
  }

  it('30 submits abandoned against a silent source: at most the bound ran, none is left', async () => {
    let most = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        most = Math.max(most, (await ffprobeChildren()).length);
        await sleep(50);
      }
    })();
    const clients = new AbortController();
    const pending = Array.from({ length: 30 }, async (_, i) => {
      const response = await submit(silent.url(`clip-${i}.mp4`), clients.signal);
      return { status: response.status, body: (await response.json()) as { error: { retryable: boolean } } };
    });
    // The clients give up once probes run (and a moment later), long before ffprobe's own 15 s limit.
    for (let i = 0; i < 100 && (await ffprobeChildren()).length < BOUND; i++) await sleep(100);
    await sleep(500);
    clients.abort();
    const outcomes = await Promise.allSettled(pending);
    sampling = false;
    await sampler;
    // Each was abandoned (one account's probes wait their turn), or told to retry.
    const answered = outcomes.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));
    expect(answered.filter((answer) => answer.status !== 503 || !answer.body.error.retryable)).toEqual([]);
    expect(await waitForNoProbes()).toEqual([]);
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(BOUND);
  });

  it('simultaneous submits of one source share one probe, which ends when the last of them leaves', async () => {
    const clients = Array.from({ length: 10 }, () => new AbortController());
    const pending = clients.map((client) => submit(silent.url('shared.mp4'), client.signal).catch(() => null));
    for (let i = 0; i < 100 && (await ffprobeChildren()).length === 0; i++) await sleep(100);
    await sleep(500);
    expect((await ffprobeChildren()).length).toBe(1);
    for (const client of clients.slice(1)) client.abort();
    await sleep(500);
    expect((await ffprobeChildren()).length).toBe(1);
    clients[0].abort();
    await Promise.all(pending);
    expect(await waitForNoProbes()).toEqual([]);
  });

  it("a submit that finds every slot taken by other accounts' probes gets a retryable 503 with Retry-After; a freed slot serves the next", async () => {
    const other = await createAccount(api, { plan: 'enterprise', credits: 1000 });
    const holders = new AbortController();
    const held = Array.from({ length: BOUND }, (_, i) =>
      submit(silent.url(`hold-${i}.mp4`), holders.signal).catch(() => null),
    );
    for (let i = 0; i < 100 && (await ffprobeChildren()).length < BOUND; i++) await sleep(100);
    expect((await ffprobeChildren()).length).toBe(BOUND);

    const refused = await submit(origin.url('good.mp4'), AbortSignal.timeout(20_000), other.apiKey);
    const body = (await refused.json()) as { error: unknown };
    expect(refused.status).toBe(503);
    expect(body.error).toMatchObject({ code: 'service_unavailable', retryable: true, type: 'server_error' });
    expect(refused.headers.get('retry-after')).toBe('1');

    holders.abort();
    await Promise.all(held);
    expect(await waitForNoProbes()).toEqual([]);
    const accepted = await submit(origin.url('good.mp4'), AbortSignal.timeout(20_000), other.apiKey);
    expect(accepted.status).toBe(202);
  });
});

// Issue 36 item 3: the slots are shared fairly between accounts, and a request's probing is bounded in time.
describe('probe slots per account', () => {
  let api: TestApi;
  let silent: Awaited<ReturnType<typeof startSilentOrigin>>;
  let origin: MediaOrigin;

  beforeAll(async () => {
    api = await startApi({
      REGION,
      STORAGE_DIR: await mkdtemp(join(tmpdir(), 'mj-probe-share-')),
      // The default share: a quarter of the slots, here 1 of 4.
      MAX_CONCURRENT_PROBES: '4',
      PROBE_REQUEST_SECONDS: '4',
    });
    await markRegionHealthy(api, REGION);
    silent = await startSilentOrigin();
    origin = await startMediaOrigin();
    origin.serve('good.mp4', await sdrMp4({ width: 160, height: 90, seconds: 1 }));
  });
  afterAll(async () => {
    await silent?.close();
    await origin?.close();
    api?.app.getHttpServer().closeAllConnections();
    await api?.close();
  });

  async function waitForProbes(count: (running: number) => boolean): Promise<number> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const running = (await ffprobeChildren()).length;
      if (count(running) || Date.now() > deadline) return running;
      await sleep(100);
    }
  }

  function estimate(account: TestAccount, urls: string[], signal?: AbortSignal) {
    return fetch(`${api.url}/v1/sdr2hdr/jobs/estimate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': account.apiKey },
      body: JSON.stringify({ inputs: urls.map((url) => ({ source_url: url })) }),
      signal,
    }).then(async (response) => ({
      status: response.status,
      retryAfter: response.headers.get('retry-after'),
      body: (await response.json()) as { accepted?: boolean; error?: any },
    }));
  }

  it("one account's slow sources take only its share: another account's estimate succeeds meanwhile", async () => {
    const [a, b] = await Promise.all([
      createAccount(api, { plan: 'enterprise', credits: 1000 }),
      createAccount(api, { plan: 'enterprise', credits: 1000 }),
    ]);
    const clientsOfA = new AbortController();
    const fromA = Array.from({ length: 6 }, (_, i) =>
      estimate(a, [silent.url(`a-${i}.mp4`)], clientsOfA.signal).catch(() => null),
    );
    expect(await waitForProbes((running) => running >= 1)).toBe(1);
    await sleep(300);
    // Account A has six sources waiting and one probe (its share) running; three slots stay free.
    expect((await ffprobeChildren()).length).toBe(1);

    const ofB = await estimate(b, [origin.url('good.mp4')]);
    expect({ status: ofB.status, accepted: ofB.body.accepted, error: ofB.body.error }).toEqual({
      status: 200,
      accepted: true,
      error: null,
    });

    // A's waiting sources wait their turn (not refused after 2 s for its share): each request gets the
    // 503 of its own 4 s probing time, as the silent source never answers.
    const answers = (await Promise.all(fromA)).filter((answer) => answer !== null);
    expect(answers.map((answer) => answer.status)).toEqual(Array(6).fill(503));
    for (const answer of answers) {
      expect(answer.body.error).toMatchObject({
        code: 'service_unavailable',
        retryable: true,
        details: { probe_seconds_limit: 4 },
      });
      expect(answer.retryAfter).toBe('1');
    }
    clientsOfA.abort();
    expect(await waitForProbes((running) => running === 0)).toBe(0);
  });

  it("a request's sources get PROBE_REQUEST_SECONDS in all: two silent sources are refused after 4 s, not one probe timeout each", async () => {
    const account = await createAccount(api, { plan: 'enterprise', credits: 1000 });
    const started = Date.now();
    const answer = await estimate(account, [silent.url('slow-1.mp4'), silent.url('slow-2.mp4')]);
    const seconds = (Date.now() - started) / 1000;
    expect(answer.status).toBe(503);
    expect(answer.body.error).toMatchObject({
      code: 'service_unavailable',
      retryable: true,
      details: { probe_seconds_limit: 4 },
    });
    expect(answer.body.error.message).toContain('longer than 4 s');
    expect(answer.retryAfter).toBe('1');
    expect(seconds).toBeGreaterThanOrEqual(3.9);
    expect(seconds).toBeLessThan(10);
    expect(await waitForProbes((running) => running === 0)).toBe(0);
  });
});

// An account's own probes delay its further sources within their request's probing time; they do not
// refuse them (the 2 s wait-then-503 is for an instance full of other accounts' probes).
describe("probe slots: an account's own share", () => {
  let api: TestApi;
  let origin: MediaOrigin;

  beforeAll(async () => {
    api = await startApi({
      REGION,
      STORAGE_DIR: await mkdtemp(join(tmpdir(), 'mj-probe-own-')),
      // The default share: 1 of 4; the default PROBE_REQUEST_SECONDS (30).
      MAX_CONCURRENT_PROBES: '4',
    });
    await markRegionHealthy(api, REGION);
    origin = await startMediaOrigin();
    const clip = await sdrMp4({ width: 160, height: 90, seconds: 1 });
    for (let i = 0; i < 3; i++) {
      origin.serve(`slow-${i}.mp4`, clip);
      // Slow but answering: a probe reads it in 4 requests, so it takes over 1.2 s.
      origin.delay(`slow-${i}.mp4`, 300);
    }
  });
  afterAll(async () => {
    await origin?.close();
    await api?.close();
  });

  it("three estimates of one account at once, each of a slow source, all succeed: the last waits for the account's share past 2 s", async () => {
    const account = await createAccount(api, { plan: 'enterprise', credits: 1000 });
    const started = Date.now();
    const answers = await Promise.all(
      Array.from({ length: 3 }, (_, i) =>
        fetch(`${api.url}/v1/sdr2hdr/jobs/estimate`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': account.apiKey },
          body: JSON.stringify({ inputs: [{ source_url: origin.url(`slow-${i}.mp4`) }] }),
        }).then(async (response) => ({ status: response.status, body: (await response.json()) as unknown })),
      ),
    );
    const seconds = (Date.now() - started) / 1000;
    expect(answers).toEqual(Array(3).fill({ status: 200, body: expect.objectContaining({ accepted: true }) }));
    // One at a time (the share is 1): the last waited for two probes of over 1.2 s each, then ran its own.
    expect(seconds).toBeGreaterThan(3.6);
  });
});
