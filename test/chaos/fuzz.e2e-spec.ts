// Property-based fuzzing of every endpoint (fast-check): arbitrary and mutated-valid JSON bodies,
// header values (Content-Type, Idempotency-Key, credentials), path segments and query strings, with a
// valid key, without one, with garbage and with the operator token. Whatever is sent, the service
// answers below 500, with either a JSON success body or the one error envelope whose code is in the
// catalogue (status, type, retryable, request id and doc_url matching it), and nothing internal
// (stack frames, file paths, SQL, driver messages) in the body.
//
// Network rule: only loopback traffic. The server fetches user-supplied URLs (job sources, webhook
// endpoints), so every generated body is rewritten before it is sent: any http(s) URL whose host is
// not a loopback or private literal (or `localhost`) is replaced by a loopback URL, and `send`
// refuses to send a body that still holds one (read as JSON or as a form). No host name but
// `localhost` (/etc/hosts) is ever looked up.
//
// Requests go through node:http rather than fetch, so paths reach the server as written (`..`, `%2e`,
// bare `%`, very long segments) instead of being normalised by the client. FUZZ_RUNS=<n> runs more
// cases per endpoint; a failure prints fast-check's seed and the shrunk request.
import fc from 'fast-check';
import { randomUUID } from 'node:crypto';
import { mkdtemp, mkdir, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { QUEUE_BOARD_PATH } from '../../src/admin/queue-board';
import { CATALOGUE, type ErrorCode } from '../../src/common/errors/catalogue';
import { mediaQueueName, WEBHOOK_QUEUE } from '../../src/queues/catalogue';
import { MaintenanceService } from '../../src/common/maintenance/maintenance.service';
import { signAssetUrl } from '../../src/jobs/asset-url';
import { signPlaybackToken } from '../../src/jobs/playback-token';
import { sdrMp4 } from '../fixtures/media';
import { call, createAccount, mergeReferences, startApi, type TestApi } from '../support/app';
import { upload } from '../support/jobs';
import { finishWithPackage } from '../support/hls-package';
import { createAccountOnPlan, markRegionHealthy } from '../support/chaos-accounts';
import {
  REGION,
  RUNS,
  NOT_FUZZED,
  future,
  OPERATIONS,
  type Fixtures,
  type FuzzRequest,
  type RawResponse,
  agent,
  stats,
  record,
  send,
  printable,
  verify,
  headerValue,
  credentialArb,
  segmentArb,
  queryArb,
  requestArb,
  BOARD_OPERATIONS,
  boardRequestArb,
  verifyBoard,
  UNDOCUMENTED,
} from '../support/fuzz-harness';

describe('fuzzing every endpoint: never a 5xx, always the envelope, nothing internal', () => {
  let api: TestApi;
  let fixtures: Fixtures;

  beforeAll(async () => {
    const storage = await mkdtemp(join(tmpdir(), 'mj-chaos-fuzz-'));
    api = await startApi({
      REGION,
      STORAGE_DIR: storage,
      // Unauthenticated fuzzing must reach the handlers, not the per-IP limit.
      IP_RATE_LIMIT: '1000000',
      LICENSE_RATE_LIMIT: '1000000',
    });
    await markRegionHealthy(api, REGION);
    const account = await createAccountOnPlan(
      api,
      { requestsPerSecond: 1_000_000, concurrentJobs: 1_000_000 },
      { credits: 1_000_000 },
    );
    const key = account.apiKey;
    const victim = await createAccount(api, { plan: 'free' });
    const uploadId = await upload(api, key, await sdrMp4());
    const submit = async (kind: 'sdr2hdr' | 'audio' = 'sdr2hdr') => {
      const response = await call(api, 'POST', `/v1/${kind}/jobs`, {
        key,
        body: { inputs: [{ upload_id: uploadId }] },
      });
      expect(response.status).toBe(202);
      return response.body.job_id as string;
    };
    const spareKeys: string[] = [];
    for (let i = 0; i < 6; i++) {
      const created = await call(api, 'POST', '/v1/account/api-keys', { key, body: { scopes: ['audio'] } });
      expect(created.status).toBe(201);
      spareKeys.push(created.body.id);
    }
    const endpoints: string[] = [];
    for (let i = 0; i < 3; i++) {
      const created = await call(api, 'POST', '/v1/webhook-endpoints', {
        key,
        body: { url: `http://127.0.0.1:9/hook-${i}` },
      });
      expect(created.status).toBe(201);
      endpoints.push(created.body.id);
    }
    const queuedJob = await submit();
    const cancelledJob = await submit();
    const audioJobs = [await submit('audio'), await submit('audio')];
    expect((await call(api, 'POST', `/v1/audio/jobs/${audioJobs[1]}/cancel`, { key })).status).toBe(200);
    expect((await call(api, 'POST', `/v1/sdr2hdr/jobs/${cancelledJob}/cancel`, { key })).status).toBe(200);
    const events = await call(api, 'GET', '/v1/events', { key });
    expect(events.status).toBe(200);
    const eventIds = events.body.data.map((event: { id: string }) => event.id);
    expect(eventIds.length).toBeGreaterThan(0);

    const licenses: { id: string; key: string }[] = [];
    for (let i = 0; i < 2; i++) {
      const created = await call(api, 'POST', '/v1/admin/licenses', {
        admin: true,
        body: { account_id: account.accountId, max_devices: 1000, expires_at: future(365) },
      });
      expect(created.status).toBe(201);
      licenses.push({ id: created.body.id, key: created.body.license_key });
    }
    const activation = await call(api, 'POST', '/v1/license/activate', {
      body: { license_key: licenses[0].key, device_id: 'fuzz-device' },
    });
    expect(activation.status).toBe(200);
    const seat = await call(api, 'POST', '/v1/license/activate', {
      body: { license_key: licenses[0].key, device_id: 'fuzz-seat' },
    });
    expect(seat.status).toBe(200);

    // A signed-in member: the owner of a dashboard account, with a password.
    const memberEmail = `fuzz-owner-${process.pid}@example.com`;
    const owner = await call(api, 'POST', '/v1/admin/accounts', {
      admin: true,
      body: { name: 'Fuzz members', plan: 'pro', owner_email: memberEmail },
    });
    expect(owner.status).toBe(201);
    const redeemed = await call(api, 'POST', '/v1/password-links/redeem', {
      body: {
        token: new URL(owner.body.owner_invite_url).hash.slice('#token='.length),
        password: 'the fuzz owner password',
      },
    });
    expect(redeemed.status).toBe(201);

    // A real stored output of the queued job, with a valid signed link, so Range and the signature
    // check meet real data.
    const assetId = `ast_fuzz${randomUUID().replace(/-/g, '').slice(0, 16)}`;
    await mkdir(join(storage, 'fuzz'), { recursive: true });
    await writeFile(join(storage, 'fuzz', 'asset.bin'), Buffer.alloc(1000, 7));
    await api.app.get(DataSource).query(
      `INSERT INTO assets (id, account_id, job_id, item_index, storage_key, size_bytes, container, content_type, expires_at)
       VALUES ($1, $2, $3, 0, 'fuzz/asset.bin', 1000, 'mp4', 'video/mp4', now() + interval '1 day')`,
      [assetId, account.accountId, queuedJob],
    );
    const signed = new URL(signAssetUrl(api.url, assetId, api.config.assetUrlSecret, new Date(Date.now() + 3600_000)));
    const assetQuery = {
      expires: signed.searchParams.get('expires')!,
      signature: signed.searchParams.get('signature')!,
    };
    expect((await call(api, 'GET', `${signed.pathname}${signed.search}`)).status).toBe(200);

    // A real HLS package (ended as the ladder worker will), so the playback routes meet real files.
    const packageAsset = await finishWithPackage(api, await submit());
    const playbackToken = signPlaybackToken(packageAsset, api.config.assetUrlSecret, new Date(Date.now() + 3600_000));

    fixtures = {
      apiKey: key,
      adminToken: api.config.adminToken!,
      accountId: account.accountId,
      uploadId,
      licenseKey: licenses[0].key,
      licenseToken: activation.body.token,
      memberEmail,
      port: Number(new URL(api.url).port),
      pools: {
        spareKey: spareKeys.slice(0, 3),
        rotatableKey: spareKeys.slice(3),
        account: [account.accountId, victim.accountId],
        victimAccount: [victim.accountId],
        sha256: ['ab'.repeat(32), 'AB'.repeat(32), 'ab'.repeat(31)],
        // Each API's own jobs, and the other API's (which it must not show).
        sdr2hdrJob: [queuedJob, cancelledJob, queuedJob, cancelledJob, audioJobs[0]],
        audioJob: [...audioJobs, ...audioJobs, queuedJob],
        asset: [assetId],
        playbackToken: [playbackToken, playbackToken.replace(/\.\d+\./, '.1.')],
        rendition: ['h264-180-sdr', 'audio', 'hevc-180-pq', 'hevc-2160-pq'],
        packageFile: ['master.m3u8', 'playlist.m3u8', 'init.mp4', 'seg-00000.m4s', 'seg-99999.m4s'],
        endpoint: endpoints.slice(0, 2),
        spareEndpoint: endpoints.slice(2),
        event: eventIds,
        license: licenses.map((license) => license.id),
        spareLicense: [licenses[1].id],
        activation: [seat.body.activation_id],
        member: [owner.body.owner.id],
        queueName: [mediaQueueName(REGION), WEBHOOK_QUEUE, 'mediajobs-no-such-queue'],
        // The media queue's BullMQ job id is the job id (src/admin/queue-board.ts).
        jobId: [queuedJob, cancelledJob, 'job_00000000000000000000000'],
        queueStatus: ['waiting', 'active', 'completed', 'failed', 'delayed', 'paused', 'prioritized', 'latest'],
        schedulerId: ['no-such-scheduler'],
      },
      assetQuery,
    };
  });

  afterAll(async () => {
    const outcomes: Record<string, number> = {};
    for (const counts of stats.values()) {
      for (const [outcome, n] of Object.entries(counts)) outcomes[outcome] = (outcomes[outcome] ?? 0) + n;
    }
    const succeeded = (counts: Record<string, number>) => Object.keys(counts).some((outcome) => /^2/.test(outcome));
    console.log(
      JSON.stringify({
        test: 'chaos/fuzz',
        runs_per_operation: RUNS,
        requests: Object.values(outcomes).reduce((a, b) => a + b, 0),
        outcomes,
        operations: stats.size,
        operations_never_2xx: [...stats].filter(([, counts]) => !succeeded(counts)).map(([operation]) => operation),
      }),
    );
    if (api) {
      await api.app.get(MaintenanceService).set({ enabled: false, until: null });
      await api.close();
    }
    agent.destroy();
  });

  it('the fuzzed operations are exactly the documented ones (customer and operator references)', async () => {
    const { paths } = mergeReferences([
      (await call(api, 'GET', '/docs/openapi.json')).body,
      (await call(api, 'GET', '/docs/operator/openapi.json')).body,
    ]);
    const documented = Object.entries<Record<string, unknown>>(paths)
      .flatMap(([path, item]) =>
        ['get', 'put', 'post', 'delete', 'patch'].filter((m) => item[m]).map((m) => `${m.toUpperCase()} ${path}`),
      )
      .sort();
    expect(OPERATIONS.map((op) => `${op.method} ${op.path}`).sort()).toEqual(
      documented.filter((operation) => !NOT_FUZZED.includes(operation)),
    );
  });

  it.each([...OPERATIONS, ...UNDOCUMENTED].map((op) => [`${op.method} ${op.path}`, op] as const))(
    '%s',
    async (_name, op) => {
      const maintenance = api.app.get(MaintenanceService);
      await fc.assert(
        fc.asyncProperty(requestArb(op, fixtures), async (request) => {
          const response = await send(fixtures.port, request);
          record(`${op.method} ${op.path}`, response);
          // A fuzzed operator may switch maintenance on: switch it off again for the next case.
          if (op.path === '/v1/admin/maintenance') await maintenance.set({ enabled: false, until: null });
          verify(api, request, response);
        }),
        // Operations with shaped bodies get more cases: they reach the deepest code (sources, probes).
        { numRuns: op.shapes ? RUNS * 2 : RUNS },
      );
    },
    120_000,
  );

  it('unknown paths and methods anywhere', async () => {
    const segment = segmentArb([]);
    const request = fc
      .record({
        method: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD'),
        prefix: fc.constantFrom('', '/v1', '/v2', '/docs', '/health', '/v1/admin', '/v1/account', '/metrics'),
        segments: fc.array(segment, { maxLength: 4 }),
        query: queryArb([], fixtures),
        credentials: credentialArb(fixtures, 'key'),
      })
      .map(({ method, prefix, segments, query, credentials }): FuzzRequest =>
        printable({ method, path: `${prefix}/${segments.join('/')}${query}`, headers: credentials }),
      );
    await fc.assert(
      fc.asyncProperty(request, async (r) => verify(api, r, await send(fixtures.port, r))),
      { numRuns: RUNS * 3 },
    );
  }, 120_000);

  // Each case below was a counterexample of the properties above, kept as a plain regression test.
  describe('regressions found by fuzzing', () => {
    /** Sends through `send`, runs the generic checks, and returns the envelope's code and message. */
    async function expectEnvelope(request: FuzzRequest, code: ErrorCode): Promise<RawResponse> {
      const response = await send(fixtures.port, printable(request));
      verify(api, request, response);
      expect({ status: response.status, code: JSON.parse(response.text).error.code }).toEqual({
        status: CATALOGUE[code].status,
        code,
      });
      return response;
    }
    const withKey = () => ({ 'x-api-key': fixtures.apiKey });

    /** Writes raw bytes to a fresh connection and returns everything the server sends before it closes. */
    function rawExchange(bytes: Buffer): Promise<string> {
      return new Promise((resolve, reject) => {
        const socket = connect(fixtures.port, '127.0.0.1', () => socket.end(bytes));
        const chunks: Buffer[] = [];
        socket.on('data', (chunk) => chunks.push(chunk));
        socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
        socket.on('error', reject);
        socket.setTimeout(30_000, () => socket.destroy(new Error('no answer within 30 s')));
      });
    }

    function parseRaw(text: string): { status: number; headers: Record<string, string>; body: string } {
      const [head, ...rest] = text.split('\r\n\r\n');
      const [statusLine, ...lines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      return { status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n') };
    }

    it('a path that does not percent-decode is the envelope, not Fastify’s FST_ERR_BAD_URL body', async () => {
      for (const path of ['/v1/sdr2hdr/jobs/%zz', '/v1/events/%', '/v1/webhook-endpoints/%C0%AE/deliveries']) {
        const response = await expectEnvelope({ method: 'GET', path, headers: withKey() }, 'invalid_parameter');
        expect(response.text).not.toMatch(/FST_|not a valid url component/);
      }
    });

    it('a path segment over 100 characters is the envelope, not a bare 414', async () => {
      await expectEnvelope(
        {
          method: 'POST',
          path: `/v1/admin/licenses/${'x'.repeat(101)}/revoke`,
          headers: { 'x-admin-token': fixtures.adminToken },
        },
        'invalid_parameter',
      );
    });

    it('U+0000 in a path id or a stored value is 400 invalid_parameter, not a 500 from PostgreSQL', async () => {
      for (const path of ['/v1/sdr2hdr/jobs/%00', '/v1/webhook-endpoints/%00', '/v1/events/a%00b']) {
        await expectEnvelope({ method: 'GET', path, headers: withKey() }, 'invalid_parameter');
      }
      const admin = { 'x-admin-token': fixtures.adminToken, 'content-type': 'application/json' };
      await expectEnvelope({ method: 'GET', path: '/v1/admin/accounts/%00', headers: admin }, 'invalid_parameter');
      const json = { name: 'Nul\u0000Ltd', plan: 'free' };
      await expectEnvelope(
        { method: 'POST', path: '/v1/admin/accounts', headers: admin, body: Buffer.from(JSON.stringify(json)), json },
        'invalid_parameter',
      );
      const submit = { inputs: [{ upload_id: fixtures.uploadId }], metadata: { note: 'a\u0000b' } };
      await expectEnvelope(
        {
          method: 'POST',
          path: '/v1/sdr2hdr/jobs',
          headers: { ...withKey(), 'content-type': 'application/json' },
          body: Buffer.from(JSON.stringify(submit)),
          json: submit,
        },
        'invalid_parameter',
      );
    });

    it('the queue board answers a deeply nested JSON body 400 invalid_parameter in the envelope, not 500', async () => {
      let deep: unknown = 1;
      for (let i = 0; i < 100; i++) deep = { a: deep };
      // A route the board keeps (retrying one job): the body is refused before the job is looked up.
      const request = printable({
        method: 'PUT',
        path: `${QUEUE_BOARD_PATH}/api/queues/${WEBHOOK_QUEUE}/none/retry`,
        headers: { 'x-admin-token': fixtures.adminToken, 'content-type': 'application/json' },
        body: Buffer.from(JSON.stringify(deep)),
        json: deep,
      });
      const response = await send(fixtures.port, request);
      expect(response.status).toBe(400);
      expect(JSON.parse(response.text).error).toMatchObject({
        code: 'invalid_parameter',
        message: 'The request body nests arrays and objects more than 32 levels deep.',
      });
      verifyBoard(api, request, response, true);
    });

    it('a deeply nested JSON body is 400 invalid_parameter, not a stack overflow (500), with or without Idempotency-Key', async () => {
      const deep = `{"inputs":${'['.repeat(2000)}${']'.repeat(2000)}}`;
      const headerSets: Record<string, string>[] = [{}, { 'idempotency-key': randomUUID() }];
      for (const headers of headerSets) {
        const response = await expectEnvelope(
          {
            method: 'POST',
            path: '/v1/sdr2hdr/jobs',
            headers: { ...withKey(), ...headers, 'content-type': 'application/json' },
            body: Buffer.from(deep),
          },
          'invalid_parameter',
        );
        expect(JSON.parse(response.text).error.message).toMatch(/more than 32 levels deep/);
      }
      // Much deeper still (within the 1 MiB body limit), on an admin route.
      await expectEnvelope(
        {
          method: 'POST',
          path: '/v1/admin/licenses',
          headers: { 'x-admin-token': fixtures.adminToken, 'content-type': 'application/json' },
          body: Buffer.from(`${'['.repeat(200_000)}${']'.repeat(200_000)}`),
        },
        'invalid_parameter',
      );
    });

    it('a spend limit JavaScript prints in exponent form (5e-324) is 400 invalid_parameter, not a 500', async () => {
      const admin = { 'x-admin-token': fixtures.adminToken, 'content-type': 'application/json' };
      for (const path of ['/v1/admin/accounts/job_', `/v1/admin/accounts/${fixtures.pools.victimAccount[0]}`]) {
        const text = '{"status":"active","spend_limit_usd":5e-324}';
        const response = await expectEnvelope(
          { method: 'PATCH', path, headers: admin, body: Buffer.from(text), json: JSON.parse(text) },
          'invalid_parameter',
        );
        expect(JSON.parse(response.text).error.param).toBe('spend_limit_usd');
      }
    });

    it('null for a field the account cannot lack (plan, status, subscription) is a 400, not a 500', async () => {
      const admin = { 'x-admin-token': fixtures.adminToken, 'content-type': 'application/json' };
      const [victim] = fixtures.pools.victimAccount;
      const before = await call(api, 'GET', `/v1/admin/accounts/${victim}`, { admin: true });
      for (const field of ['plan', 'status', 'subscription_status']) {
        const json = { [field]: null };
        const response = await expectEnvelope(
          {
            method: 'PATCH',
            path: `/v1/admin/accounts/${victim}`,
            headers: admin,
            body: Buffer.from(JSON.stringify(json)),
            json,
          },
          'missing_parameter',
        );
        expect(JSON.parse(response.text).error.param).toBe(field);
      }
      const after = await call(api, 'GET', `/v1/admin/accounts/${victim}`, { admin: true });
      expect(after.body).toEqual(before.body);
      // spend_limit_usd: null stays what it is documented to be: no cap.
      const json = { spend_limit_usd: null };
      const uncapped = await send(
        fixtures.port,
        printable({
          method: 'PATCH',
          path: `/v1/admin/accounts/${victim}`,
          headers: admin,
          body: Buffer.from(JSON.stringify(json)),
          json,
        }),
      );
      expect(uncapped.status).toBe(200);
      expect(JSON.parse(uncapped.text).spend_limit_usd).toBeNull();
    });

    it('a webhook endpoint with "events": null gets every event, not a 500', async () => {
      const json = { url: 'http://127.0.0.1:9/null-events', events: null };
      const response = await send(
        fixtures.port,
        printable({
          method: 'POST',
          path: '/v1/webhook-endpoints',
          headers: { ...withKey(), 'content-type': 'application/json' },
          body: Buffer.from(JSON.stringify(json)),
          json,
        }),
      );
      expect(response.status).toBe(201);
      expect(JSON.parse(response.text).events).toEqual([
        'job.succeeded',
        'job.partially_succeeded',
        'job.failed',
        'job.cancelled',
      ]);
    });

    it('a path climbing out of /docs is 404 route_not_found, not 500', async () => {
      for (const path of ['/docs/openapi.json//', '/docs/%2e%2e/%2e%2e/health/live', '/docs/errors.html/..']) {
        await expectEnvelope({ method: 'GET', path, headers: {} }, 'route_not_found');
      }
    });

    it('a GET that misses a file of Swagger UI is 404, not 405 with “Allow: GET”', async () => {
      for (const path of ['/docs/no-such-page', '/docs/swagger-ui/no-such-file.js']) {
        const response = await expectEnvelope({ method: 'GET', path, headers: {} }, 'route_not_found');
        expect([path, response.headers.allow]).toEqual([path, undefined]);
      }
      const post = await expectEnvelope(
        { method: 'POST', path: '/docs/swagger-ui/no-such-file.js', headers: {} },
        'method_not_allowed',
      );
      expect(post.headers.allow).toBe('GET');
    });

    it('a request line Node cannot parse (raw non-ASCII byte) gets the envelope and Connection: close', async () => {
      const response = parseRaw(
        await rawExchange(Buffer.from('GET /v1/sdr2hdr/jobs/\xa0 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n', 'latin1')),
      );
      expect(response.status).toBe(400);
      expect(response.headers['connection']).toBe('close');
      expect(response.headers['content-type']).toMatch(/^application\/json/);
      const { error } = JSON.parse(response.body);
      expect(error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_parameter', param: null });
      expect(error.request_id).toBe(response.headers['x-request-id']);
      expect(error.doc_url).toBe(`${api.config.docsUrl}/errors.html#invalid_parameter`);
      // The same for HEAD, without a body.
      const head = parseRaw(await rawExchange(Buffer.from('HEAD /\xa0 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n', 'latin1')));
      expect(head.status).toBe(400);
      expect(head.body).toBe('');
    });

    it('oversized request headers are 413 request_too_large with the envelope', async () => {
      const response = parseRaw(
        await rawExchange(
          Buffer.from(`GET /v1/account/credits HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: ${'a'.repeat(20_000)}\r\n\r\n`),
        ),
      );
      expect(response.status).toBe(413);
      const { error } = JSON.parse(response.body);
      expect(error).toMatchObject({ code: 'request_too_large', type: 'invalid_request_error' });
      expect(error.request_id).toBe(response.headers['x-request-id']);
    });
  });

  it('the queue board at /admin/queues: with and without the operator token or its cookie', async () => {
    const signIn = await send(
      fixtures.port,
      printable({
        method: 'POST',
        path: `${QUEUE_BOARD_PATH}/session`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: Buffer.from(new URLSearchParams({ token: fixtures.adminToken }).toString()),
      }),
    );
    expect(signIn.status).toBe(303);
    const cookie = String(signIn.headers['set-cookie']).split(';')[0];
    expect(cookie).toMatch(/^mj_queue_board=\d+\./);
    const valid = (request: FuzzRequest) =>
      request.headers['x-admin-token'] === fixtures.adminToken || request.headers.cookie === cookie;
    for (const op of BOARD_OPERATIONS) {
      await fc.assert(
        fc.asyncProperty(boardRequestArb(op, fixtures, cookie), async (request) => {
          const response = await send(fixtures.port, request);
          record(`BOARD ${op.method} ${op.path}`, response);
          verifyBoard(api, request, response, valid(request));
        }),
        { numRuns: Math.max(10, Math.round(RUNS / 3)) },
      );
    }

    // The sign-in form: the right token signs in (303 and the cookie), anything else is the page again.
    const form = fc.oneof(
      fc.constant(fixtures.adminToken),
      headerValue(60),
      fc.constant(''),
      fc.constant(fixtures.apiKey),
    );
    await fc.assert(
      fc.asyncProperty(
        form,
        fc.constantFrom('application/x-www-form-urlencoded', 'application/json'),
        async (token, type) => {
          const body =
            type === 'application/json' ? JSON.stringify({ token }) : new URLSearchParams({ token }).toString();
          const request = printable({
            method: 'POST',
            path: `${QUEUE_BOARD_PATH}/session`,
            headers: { 'content-type': type },
            body: Buffer.from(body),
            json: type === 'application/json' ? { token } : undefined,
          });
          const response = await send(fixtures.port, request);
          record(`BOARD POST ${QUEUE_BOARD_PATH}/session`, response);
          if (token === fixtures.adminToken) {
            expect(response.status).toBe(303);
            expect(String(response.headers['set-cookie'])).toMatch(/^mj_queue_board=/);
          } else {
            verifyBoard(api, request, response, false);
            expect(response.headers['set-cookie']).toBeUndefined();
          }
        },
      ),
      { numRuns: RUNS },
    );
  }, 600_000);
});
