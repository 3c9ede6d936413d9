// Unbounded storage per account (issue 29 item 6): the bytes an account holds in live uploads are bounded
// by its plan; an upload past the bound is 429 quota_exceeded with the limit and the bytes held, nothing is
// kept, and two uploads at once cannot both slip under it.
import { mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { call, createAccount, startApi, type TestAccount, type TestApi } from '../support/app';
import { expectError } from '../support/error-checks';

const MiB = 1024 * 1024;

describe('upload storage per plan', () => {
  let api: TestApi;
  let db: DataSource;
  let storageDir: string;
  const plan = `uploads-${process.pid}`;

  beforeAll(async () => {
    storageDir = await mkdtemp(join(tmpdir(), 'mj-upload-storage-'));
    api = await startApi({ STORAGE_DIR: storageDir });
    db = api.app.get(DataSource);
    // A plan of our own (a copy of pro) with a small bound, so no other test's plan changes.
    await db.query(
      `INSERT INTO plans SELECT (jsonb_populate_record(NULL::plans, to_jsonb(p) || jsonb_build_object('id', $1::text))).*
         FROM plans p WHERE p.id = 'pro' ON CONFLICT (id) DO NOTHING`,
      [plan],
    );
    await db.query(`UPDATE plans SET upload_storage_bytes = $2 WHERE id = $1`, [plan, 5 * MiB]);
  });
  afterAll(() => api.close());

  /** A fresh account on the small plan (moved before its key is first used). */
  async function account(): Promise<TestAccount> {
    const created = await createAccount(api, { plan: 'pro' });
    await db.query(`UPDATE accounts SET plan_id = $2 WHERE id = $1`, [created.accountId, plan]);
    return created;
  }

  const send = (who: TestAccount, bytes: number, fill = 1) =>
    call(api, 'POST', '/v1/uploads', {
      key: who.apiKey,
      rawBody: Buffer.alloc(bytes, fill),
      headers: { 'content-type': 'video/mp4' },
    });

  async function storedFiles(who: TestAccount): Promise<number> {
    return (await readdir(join(storageDir, 'uploads', who.accountId)).catch(() => [])).length;
  }

  it('uploads up to the bound are kept; the next is quota_exceeded with the limit and the bytes held', async () => {
    const who = await account();
    expect((await send(who, 2 * MiB, 1)).status).toBe(201);
    expect((await send(who, 2 * MiB, 2)).status).toBe(201);
    const over = await send(who, 2 * MiB, 3);
    expectError(api, over, 'quota_exceeded', null);
    expect(over.body.error.details).toEqual({ upload_bytes_limit: 5 * MiB, upload_bytes_used: 4 * MiB });
    expect(over.body.error.message).toContain(String(5 * MiB));
    expect(await storedFiles(who)).toBe(2);
    // What is left still fits.
    expect((await send(who, 1 * MiB, 4)).status).toBe(201);

    // Expired uploads no longer count.
    await db.query(`UPDATE uploads SET expires_at = now() - interval '1 second' WHERE account_id = $1`, [
      who.accountId,
    ]);
    expect((await send(who, 2 * MiB, 5)).status).toBe(201);
  });

  it('two uploads at once that only fit one at a time: one is kept, the other refused and not stored', async () => {
    const who = await account();
    const answers = await Promise.all([send(who, 3 * MiB, 6), send(who, 3 * MiB, 7)]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, 429]);
    expect(answers.find((answer) => answer.status === 429)!.body.error.code).toBe('quota_exceeded');
    expect(await storedFiles(who)).toBe(1);
    const [held] = await db.query(
      `SELECT count(*)::int AS uploads, sum(size_bytes)::bigint AS bytes FROM uploads WHERE account_id = $1`,
      [who.accountId],
    );
    expect({ uploads: held.uploads, bytes: Number(held.bytes) }).toEqual({ uploads: 1, bytes: 3 * MiB });
  });

  it('another account is not held by this one', async () => {
    const first = await account();
    const second = await account();
    expect((await send(first, 4 * MiB, 8)).status).toBe(201);
    expect((await send(second, 4 * MiB, 9)).status).toBe(201);
  });
});
