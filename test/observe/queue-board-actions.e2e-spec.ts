// The queue board's changes (issue 29 item 9): a change made with the board's sign-in cookie must come
// from the service's own origin and carry the board's CSRF token (as the dashboard's session does), a
// cross-site form or text/plain POST changes nothing, and only the documented actions exist: retry,
// promote and remove one job. Everything else bull-board offers (add, obliterate, empty, pause, edit
// the data, the bulk actions…) is not a route. Every refusal is the error envelope.
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QUEUE_BOARD_PATH } from '../../src/admin/queue-board';
import { mediaQueueName, WEBHOOK_QUEUE } from '../../src/queues/catalogue';
import { bullConnection } from '../../src/queues/drivers/bullmq-connection';
import { call, startApi, type TestApi } from '../support/app';
import { expectError } from '../support/error-checks';

describe('the queue board: origin, CSRF token and the actions it offers', () => {
  let api: TestApi;
  let queue: Queue;
  let origin: string;
  /** The sign-in cookie and the CSRF cookie the browser got, as a Cookie header. */
  let cookies: string;
  let csrfToken: string;
  let setCookies: string[];
  const region = `boardact${process.pid}`;
  const name = mediaQueueName(region);
  const api_ = (path: string) => `${QUEUE_BOARD_PATH}/api${path}`;

  beforeAll(async () => {
    // The region counts as having had a worker before the API starts, so the board lists its queue.
    const redis = new Redis(process.env.REDIS_URL!);
    await redis.sadd(`${process.env.REDIS_PREFIX}:regions`, region);
    redis.disconnect();
    api = await startApi({ STORAGE_DIR: mkdtempSync(join(tmpdir(), 'mj-board-actions-')) });
    origin = new URL(api.url).origin;
    queue = new Queue(name, { connection: bullConnection(api.config, 'producer'), prefix: api.config.redisPrefix });
    await queue.obliterate({ force: true });
    expect((await call(api, 'GET', api_('/queues'), { admin: true })).status).toBe(200);

    const signIn = await fetch(`${api.url}${QUEUE_BOARD_PATH}/session`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
      body: new URLSearchParams({ token: api.config.adminToken! }).toString(),
    });
    expect(signIn.status).toBe(303);
    setCookies = signIn.headers.getSetCookie();
    const session = setCookies.find((line) => line.startsWith('mj_queue_board='));
    const csrf = setCookies.find((line) => line.startsWith('XSRF-TOKEN='));
    expect(session).toBeDefined();
    csrfToken = csrf?.split(';')[0].slice('XSRF-TOKEN='.length) ?? '';
    cookies = [session!.split(';')[0], ...(csrf ? [csrf.split(';')[0]] : [])].join('; ');
  }, 60_000);

  afterAll(async () => {
    await queue?.obliterate({ force: true }).catch(() => undefined);
    await queue?.close();
    await api?.close();
  });

  const delayed = async (id: string) => {
    await queue.add('process-job', { jobId: id }, { jobId: id, delay: 3_600_000 });
    return id;
  };

  it('a cross-site form or text/plain POST with the cookie changes nothing and is answered with the envelope', async () => {
    const before = await queue.getJobCountByTypes('waiting', 'delayed', 'prioritized');
    const form = await call(api, 'POST', api_(`/queues/${name}/add`), {
      headers: { cookie: cookies, origin: 'http://evil.example', 'content-type': 'application/x-www-form-urlencoded' },
      rawBody: 'name=evil&data=%7B%7D',
    });
    expect(form.status).toBeGreaterThanOrEqual(400);
    expect(form.body.error.code).toEqual(expect.any(String));
    expectError(api, form, form.body.error.code);
    const text = await call(api, 'POST', api_(`/queues/${name}/add`), {
      headers: { cookie: cookies, origin: 'http://evil.example', 'content-type': 'text/plain' },
      rawBody: JSON.stringify({ name: 'evil', data: {} }),
    });
    expect(text.status).toBeGreaterThanOrEqual(400);
    expectError(api, text, text.body.error.code);
    expect(await queue.getJobCountByTypes('waiting', 'delayed', 'prioritized')).toBe(before);
  });

  it('a change made with the cookie must come from this origin and carry the X-XSRF-TOKEN of the sign-in', async () => {
    // Signing in sets the token beside the session, for the board's page to read (axios sends the
    // XSRF-TOKEN cookie back as X-XSRF-TOKEN): not HttpOnly, the board's path, strict.
    expect(setCookies.find((line) => line.startsWith('XSRF-TOKEN='))).toMatch(
      /^XSRF-TOKEN=[\w-]{40,}; Path=\/admin\/queues; Max-Age=\d+; SameSite=Strict$/,
    );
    const id = await delayed(`job_csrf${process.pid}`);
    const promote = (headers: Record<string, string>) =>
      call(api, 'PUT', api_(`/queues/${name}/${id}/promote`), { headers: { cookie: cookies, ...headers } });

    expectError(api, await promote({}), 'csrf_check_failed', 'Origin');
    expectError(
      api,
      await promote({ origin: 'http://evil.example', 'x-xsrf-token': csrfToken }),
      'csrf_check_failed',
      'Origin',
    );
    expectError(api, await promote({ origin }), 'csrf_check_failed', 'X-XSRF-TOKEN');
    expectError(api, await promote({ origin, 'x-xsrf-token': 'A'.repeat(43) }), 'csrf_check_failed', 'X-XSRF-TOKEN');
    expect(await queue.getJobState(id)).toBe('delayed');

    const done = await promote({ origin, 'x-xsrf-token': csrfToken });
    expect(done.status).toBeLessThan(300);
    expect(await queue.getJobState(id)).toBe('waiting');
  });

  it('the operator token in its header (curl) needs no CSRF token: no page can send that header', async () => {
    const id = await delayed(`job_curl${process.pid}`);
    const done = await call(api, 'PUT', api_(`/queues/${name}/${id}/promote`), { admin: true });
    expect(done.status).toBeLessThan(300);
    expect(await queue.getJobState(id)).toBe('waiting');
  });

  it('only retry, promote and remove of one job exist; every other action is no route (404 or 405), and changes nothing', async () => {
    const id = await delayed(`job_keep${process.pid}`);
    const switchedOff: [string, string, unknown?][] = [
      ['POST', `/queues/${name}/add`, { name: 'added', data: {} }],
      ['PUT', `/queues/${name}/obliterate`],
      ['PUT', `/queues/${name}/empty`],
      ['PUT', `/queues/${name}/pause`],
      ['PUT', `/queues/${name}/resume`],
      ['PUT', '/queues/pause'],
      ['PUT', '/queues/resume'],
      ['PUT', `/queues/${name}/retry/failed`],
      ['PUT', `/queues/${name}/promote`],
      ['PUT', `/queues/${name}/clean/delayed`],
      ['PUT', `/queues/${name}/concurrency`, { concurrency: 1 }],
      ['PUT', `/queues/${name}/rate-limit`, { max: 1, duration: 1000 }],
      ['PUT', `/queues/${name}/rate-limit/release`],
      ['PATCH', `/queues/${name}/${id}/update-data`, { jobData: { jobId: 'other' } }],
      ['PATCH', `/queues/${name}/${id}/delay`, { delay: 1 }],
      ['PATCH', `/queues/${name}/${id}/priority`, { priority: 1 }],
      ['PUT', `/queues/${name}/${id}/remove-unprocessed-children`],
      ['PUT', `/queues/${name}/job-schedulers/s1/remove`],
      ['PATCH', `/queues/${name}/job-schedulers/s1`, { pattern: '* * * * *' }],
      ['PUT', `/queues/${name}/job-schedulers/s1/run`],
    ];
    for (const [method, path, body] of switchedOff) {
      const response = await call(api, method, api_(path), { admin: true, body: body ?? {} });
      try {
        // Not a route: 404, or 405 where the path reads as another route's (GET …/:queueName/:jobId).
        const code = response.status === 405 ? 'method_not_allowed' : 'route_not_found';
        expectError(api, response, code);
        if (code === 'method_not_allowed') expect(response.headers.get('allow')).toBe('GET');
      } catch (error) {
        throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(response.body)}\n${String(error)}`);
      }
    }
    expect(await queue.getJobState(id)).toBe('delayed');
    expect((await queue.getJob(id))?.data).toEqual({ jobId: id });
    expect(await queue.isPaused()).toBe(false);
    // Pausing every queue is gone too: the webhooks queue (every account's deliveries) keeps running.
    const webhooks = new Queue(WEBHOOK_QUEUE, {
      connection: bullConnection(api.config, 'producer'),
      prefix: api.config.redisPrefix,
    });
    expect(await webhooks.isPaused()).toBe(false);
    await webhooks.close();
    expect(await queue.count()).toBe(await queue.getJobCountByTypes('waiting', 'delayed', 'prioritized'));

    // Removing one job stays (the documented remove).
    const removed = await call(api, 'PUT', api_(`/queues/${name}/${id}/clean`), { admin: true });
    expect(removed.status).toBeLessThan(300);
    expect(await queue.getJob(id)).toBeUndefined();
  });

  it("bull-board's own refusals are the envelope: an unknown queue, an unknown job", async () => {
    const unknownQueue = await call(api, 'PUT', api_('/queues/mediajobs-no-such-queue/job_x/retry'), { admin: true });
    expectError(api, unknownQueue, 'resource_missing', 'queueName');
    const unknownJob = await call(api, 'GET', api_(`/queues/${name}/job_nothere`), { admin: true });
    expectError(api, unknownJob, 'resource_missing', 'jobId');
  });
});
