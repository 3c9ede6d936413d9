// Issue 12 items 15 and 16, against the built API as an operator runs it (its log output captured)
// and a real worker: a finished job's signed download link answers a Range in an unknown unit with
// the whole body (RFC 9110 §14.2), and neither the link's signature nor an API key sent by mistake
// as ?api_key= appears in any log line.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFile, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureBuilt, ROOT } from '../support/dist-build';
import { waitUntil } from '../support/error-checks';
import { freePort } from '../support/app';
import { startWorker, type TestWorker } from '../support/worker';
import { sdrMp4 } from '../fixtures/media';

const REGION = 'links';

describe('signed asset links: Range and logs', () => {
  let child: ChildProcessWithoutNullStreams;
  let worker: TestWorker;
  let output = '';
  let base = '';
  let apiKey = '';
  let link = '';
  let size = 0;

  async function send(method: string, path: string, headers: Record<string, string> = {}, body?: string | Buffer) {
    const response = await fetch(`${base}${path}`, { method, headers, body });
    const text = await response.text();
    let parsed: any = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON
    }
    return { status: response.status, headers: response.headers, body: parsed };
  }
  const json = (value: unknown) => JSON.stringify(value);
  const asAdmin = { 'x-admin-token': process.env.ADMIN_TOKEN!, 'content-type': 'application/json' };

  beforeAll(async () => {
    const storageDir = await mkdtemp(join(tmpdir(), 'mj-links-'));
    const main = ensureBuilt('dist/src/main.js');
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const env = { STORAGE_DIR: storageDir, REGION, PUBLIC_BASE_URL: base, IP_RATE_LIMIT: '1000' };
    child = spawn(process.execPath, [main], {
      cwd: ROOT,
      env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info' },
    });
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await waitUntil(async () => output.includes('listening on') || child.exitCode !== null, 30_000, 50);
    if (child.exitCode !== null) throw new Error(`API exited: ${output}`);
    worker = await startWorker(env);

    const account = await send('POST', '/v1/admin/accounts', asAdmin, json({ name: 'Links Co', plan: 'pro' }));
    expect(account.status).toBe(201);
    apiKey = account.body.api_key.key;
    const granted = await send(
      'POST',
      `/v1/admin/accounts/${account.body.account.id}/credits`,
      asAdmin,
      json({ credits: 100, reason: 'test' }),
    );
    expect(granted.status).toBe(201);
    const uploaded = await send(
      'POST',
      '/v1/uploads',
      { 'x-api-key': apiKey, 'content-type': 'video/mp4' },
      await readFile(await sdrMp4()),
    );
    expect(uploaded.status).toBe(201);
    const submitted = await send(
      'POST',
      '/v1/sdr2hdr/jobs',
      { 'x-api-key': apiKey, 'content-type': 'application/json' },
      json({ inputs: [{ upload_id: uploaded.body.upload_id }], output: { quality: 'fast' } }),
    );
    expect(submitted.status).toBe(202);
    let job: any;
    await waitUntil(
      async () => {
        job = (await send('GET', `/v1/sdr2hdr/jobs/${submitted.body.job_id}`, { 'x-api-key': apiKey })).body;
        return ['succeeded', 'failed', 'cancelled'].includes(job.status);
      },
      120_000,
      250,
    );
    expect(job.status).toBe('succeeded');
    link = job.items[0].output.url;
    size = job.items[0].output.size_bytes;
    expect(new URL(link).searchParams.get('signature')).toBeTruthy();
  }, 180_000);

  afterAll(async () => {
    await worker?.close();
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
  });

  describe('Range (item 15)', () => {
    it('a unit the server does not understand (items=0-5) is ignored: 200 and the whole body', async () => {
      const response = await fetch(link, { headers: { range: 'items=0-5' } });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-range')).toBeNull();
      expect((await response.arrayBuffer()).byteLength).toBe(size);
    });

    it('a multi-range request is answered with the whole body too (no multipart), not 416', async () => {
      const response = await fetch(link, { headers: { range: 'bytes=0-1,4-5' } });
      expect(response.status).toBe(200);
      expect((await response.arrayBuffer()).byteLength).toBe(size);
    });

    it('bytes ranges still work: 206 for a satisfiable one, 416 for one past the end', async () => {
      const ranged = await fetch(link, { headers: { range: 'Bytes=0-9' } });
      expect(ranged.status).toBe(206);
      expect(ranged.headers.get('content-range')).toBe(`bytes 0-9/${size}`);
      expect((await ranged.arrayBuffer()).byteLength).toBe(10);
      const beyond = await fetch(link, { headers: { range: `bytes=${size + 10}-` } });
      expect(beyond.status).toBe(416);
      expect(((await beyond.json()) as any).error.code).toBe('range_not_satisfiable');
    });
  });

  it('logs carry neither the signed link signature nor an API key sent as ?api_key= (item 16)', async () => {
    expect((await fetch(link)).status).toBe(200);
    const mistaken = await send('GET', `/v1/account/credits?api_key=${apiKey}&limit=1`);
    expect(mistaken.status).toBe(401);
    const signature = new URL(link).searchParams.get('signature')!;
    const assetPath = new URL(link).pathname;
    // Request lines are written through a buffer flushed every 250 ms: wait for the last request's.
    await waitUntil(async () => output.includes('/v1/account/credits?'), 5000, 50);
    const lines = output.split('\n').filter((line) => line.trim());
    expect(lines.filter((line) => line.includes(signature))).toEqual([]);
    expect(lines.filter((line) => line.includes(apiKey))).toEqual([]);
    // The lines are still there, with what is useful to an operator.
    expect(lines.some((line) => line.includes(`${assetPath}?expires=`) && line.includes('signature=[redacted]'))).toBe(
      true,
    );
    expect(lines.some((line) => line.includes('/v1/account/credits?api_key=[redacted]&limit=1'))).toBe(true);
  });
});
