// Issue 12 item 14: Idempotency-Key on POST /v1/uploads (docs/api-decisions.md §1: every POST). The same key with the
// same bytes answers the first upload again (one upload, Idempotent-Replayed); other bytes under the
// key are idempotency_conflict; a failed upload leaves the key free for the retry.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { call, createAccount, startApi, type TestAccount, type TestApi } from '../support/app';
import { expectError } from '../support/error-checks';

describe('Idempotency-Key on uploads', () => {
  let api: TestApi;
  let account: TestAccount;

  beforeAll(async () => {
    api = await startApi({ IP_RATE_LIMIT: '1000', STORAGE_DIR: await mkdtemp(join(tmpdir(), 'mj-upl-idem-')) });
    account = await createAccount(api);
  });
  afterAll(() => api.close());

  const send = (bytes: Buffer, key?: string, contentType = 'video/mp4') =>
    call(api, 'POST', '/v1/uploads', {
      key: account.apiKey,
      rawBody: bytes,
      headers: { 'content-type': contentType, ...(key ? { 'idempotency-key': key } : {}) },
    });
  const uploadsOf = async (): Promise<number> => {
    const rows: { n: number }[] = await api.app
      .get(DataSource)
      .query('SELECT count(*)::int AS n FROM uploads WHERE account_id = $1', [account.accountId]);
    return rows[0].n;
  };
  const bytes = (fill: string, size = 64 * 1024) => Buffer.alloc(size, fill);

  it('the same key and bytes twice: one upload, the second answer is the first one replayed', async () => {
    const before = await uploadsOf();
    const first = await send(bytes('a'), 'upl-key-1');
    expect(first.status).toBe(201);
    const second = await send(bytes('a'), 'upl-key-1');
    expect(second.status).toBe(201);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(await uploadsOf()).toBe(before + 1);
  });

  it('the same key with other bytes → 409 idempotency_conflict, nothing stored', async () => {
    expect((await send(bytes('b'), 'upl-key-2')).status).toBe(201);
    const before = await uploadsOf();
    const conflict = await send(bytes('c'), 'upl-key-2');
    expectError(api, conflict, 'idempotency_conflict', 'Idempotency-Key');
    expect(conflict.status).toBe(409);
    expect(await uploadsOf()).toBe(before);
  });

  it('the same key with the same bytes but another Content-Type → 409 idempotency_conflict', async () => {
    expect((await send(bytes('d'), 'upl-key-3', 'video/mp4')).status).toBe(201);
    expectError(api, await send(bytes('d'), 'upl-key-3', 'video/quicktime'), 'idempotency_conflict');
  });

  it('without a key, the same bytes twice are two uploads', async () => {
    const before = await uploadsOf();
    const first = await send(bytes('e'));
    const second = await send(bytes('e'));
    expect(second.body.upload_id).not.toBe(first.body.upload_id);
    expect(await uploadsOf()).toBe(before + 2);
  });

  it('a failed upload (empty body) leaves the key free: the corrected retry with the key succeeds', async () => {
    expectError(api, await send(Buffer.alloc(0), 'upl-key-4'), 'missing_parameter');
    const retried = await send(bytes('f'), 'upl-key-4');
    expect(retried.status).toBe(201);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
  });

  it('two concurrent uploads with one key: one upload; the other is replayed or told to retry (resource_locked)', async () => {
    const before = await uploadsOf();
    const [a, b] = await Promise.all([
      send(bytes('g', 1024 * 1024), 'upl-key-5'),
      send(bytes('g', 1024 * 1024), 'upl-key-5'),
    ]);
    const statuses = [a.status, b.status].sort();
    expect(statuses[0]).toBe(201);
    if (statuses[1] === 409) expect([a, b].find((r) => r.status === 409)!.body.error.code).toBe('resource_locked');
    else expect(b.body.upload_id).toBe(a.body.upload_id);
    expect(await uploadsOf()).toBe(before + 1);
  });
});
