// Names a customer recognises instead of ids (issue 42 item 6), over HTTP against the real API, PostgreSQL
// and Redis: an API key named on create keeps its name through list and rotate (or takes a new one); an
// upload keeps its file's name (?filename=), which the estimate and the job view show as
// items[i].source.filename; a bad name is 400 invalid_parameter with its param; and an upload replayed with
// its Idempotency-Key under another name is an idempotency_conflict, not the first upload's answer.
import { readFile, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { workersKey } from '../../src/queues/keys';
import { sdrMp4 } from '../fixtures/media';
import { call, createAccount, startApi, type TestAccount, type TestApi } from '../support/app';

const REGION = 'names';

describe('names instead of ids', () => {
  let api: TestApi;
  let account: TestAccount;
  let clip: Buffer;

  beforeAll(async () => {
    api = await startApi({ REGION, STORAGE_DIR: await mkdtemp(join(tmpdir(), 'mj-names-')) });
    // A live worker in the region, so a submit is admitted (nothing here runs the job).
    const redis = new Redis(api.config.redisUrl);
    await redis.zadd(workersKey(api.config, REGION), Date.now() + 3600_000, 'test-names');
    redis.disconnect();
    account = await createAccount(api, { credits: 1000 });
    clip = await readFile(await sdrMp4({ width: 320, height: 180, seconds: 1, audio: false }));
  });
  afterAll(() => api.close());

  const key = () => account.apiKey;
  const uploadAs = (query: string, headers: Record<string, string> = {}) =>
    call(api, 'POST', `/v1/uploads${query}`, {
      key: key(),
      rawBody: clip,
      headers: { 'content-type': 'video/mp4', ...headers },
    });

  it('a key named on create is listed by its name; a rotation keeps it, or takes the one it is given', async () => {
    const created = await call(api, 'POST', '/v1/account/api-keys', {
      key: key(),
      body: { scopes: ['sdr2hdr'], name: 'Render farm' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ object: 'api_key', name: 'Render farm', scopes: ['sdr2hdr'] });

    const unnamed = await call(api, 'POST', '/v1/account/api-keys', { key: key(), body: { scopes: ['audio'] } });
    expect(unnamed.body.name).toBeNull();

    const kept = await call(api, 'POST', `/v1/account/api-keys/${created.body.id}/rotate`, { key: key(), body: {} });
    expect(kept.status).toBe(201);
    expect(kept.body.name).toBe('Render farm');
    const renamed = await call(api, 'POST', `/v1/account/api-keys/${kept.body.id}/rotate`, {
      key: key(),
      body: { name: 'Render farm (2027)' },
    });
    expect(renamed.body.name).toBe('Render farm (2027)');

    const listed = await call(api, 'GET', '/v1/account/api-keys?limit=100', { key: key() });
    const names = Object.fromEntries(listed.body.data.map((k: { id: string; name: string | null }) => [k.id, k.name]));
    expect(names).toMatchObject({
      [created.body.id]: 'Render farm',
      [kept.body.id]: 'Render farm',
      [renamed.body.id]: 'Render farm (2027)',
      [unnamed.body.id]: null,
    });
  });

  it.each([
    ['empty', ''],
    ['too long', 'x'.repeat(101)],
    ['with a control character', 'Render\nfarm'],
    ['not a string', 42],
  ])('a key name %s is 400 invalid_parameter, param name, and no key is made', async (_what, name) => {
    const before = (await call(api, 'GET', '/v1/account/api-keys?limit=100', { key: key() })).body.data.length;
    const refused = await call(api, 'POST', '/v1/account/api-keys', { key: key(), body: { scopes: ['audio'], name } });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'invalid_parameter', param: 'name' });
    const after = (await call(api, 'GET', '/v1/account/api-keys?limit=100', { key: key() })).body.data.length;
    expect(after).toBe(before);
  });

  it("an upload keeps its file's name: the upload, the estimate and the job view show it", async () => {
    const uploaded = await uploadAs('?filename=Sunset%20trailer%20%E2%80%93%20final.mp4');
    expect(uploaded.status).toBe(201);
    expect(uploaded.body).toMatchObject({ object: 'upload', filename: 'Sunset trailer – final.mp4' });
    const plain = await uploadAs('');
    expect(plain.body.filename).toBeNull();

    const inputs = [{ upload_id: uploaded.body.upload_id }, { upload_id: plain.body.upload_id }];
    const estimated = await call(api, 'POST', '/v1/sdr2hdr/jobs/estimate', { key: key(), body: { inputs } });
    expect(estimated.status).toBe(200);
    expect(estimated.body.items.map((item: { source: unknown }) => item.source)).toEqual([
      { type: 'upload', upload_id: uploaded.body.upload_id, filename: 'Sunset trailer – final.mp4' },
      { type: 'upload', upload_id: plain.body.upload_id, filename: null },
    ]);

    const submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', { key: key(), body: { inputs } });
    expect(submitted.status).toBe(202);
    const read = await call(api, 'GET', `/v1/sdr2hdr/jobs/${submitted.body.job_id}`, { key: key() });
    expect(read.body.items.map((item: { source: unknown }) => item.source)).toEqual([
      { type: 'upload', upload_id: uploaded.body.upload_id, filename: 'Sunset trailer – final.mp4' },
      { type: 'upload', upload_id: plain.body.upload_id, filename: null },
    ]);
    const listed = await call(api, 'GET', '/v1/sdr2hdr/jobs?limit=5', { key: key() });
    const job = listed.body.data.find((j: { job_id: string }) => j.job_id === submitted.body.job_id);
    expect(job.items[0].source.filename).toBe('Sunset trailer – final.mp4');
  });

  it.each([
    ['too long', `?filename=${'a'.repeat(256)}.mp4`],
    ['with a control character', '?filename=a%0Ab.mp4'],
    ['empty', '?filename='],
    ['given twice', '?filename=a.mp4&filename=b.mp4'],
  ])('a filename %s is 400 invalid_parameter, param filename', async (_what, query) => {
    const refused = await uploadAs(query);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'invalid_parameter', param: 'filename' });
  });

  it('an upload replayed with its Idempotency-Key: the same name is the first answer, another name a conflict', async () => {
    const idempotency = { 'idempotency-key': `names-${Date.now()}` };
    const first = await uploadAs('?filename=take-1.mp4', idempotency);
    expect(first.status).toBe(201);
    const replay = await uploadAs('?filename=take-1.mp4', idempotency);
    expect(replay.status).toBe(201);
    expect(replay.body).toEqual(first.body);

    const renamed = await uploadAs('?filename=take-2.mp4', idempotency);
    expect(renamed.status).toBe(409);
    expect(renamed.body.error.code).toBe('idempotency_conflict');
    const unnamed = await uploadAs('', idempotency);
    expect(unnamed.status).toBe(409);
    expect(unnamed.body.error.code).toBe('idempotency_conflict');
  });
});
