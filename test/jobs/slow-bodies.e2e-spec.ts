// Slow request bodies time out (issue 12 item 10): uploads and JSON bodies trickling one byte at a
// time get 408 request_timeout (the envelope) and their connection closed, and no partial upload file
// is left; a body at a normal rate is untouched.
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sdrMp4 } from '../fixtures/media';
import { call, createAccount, startApi, type TestAccount, type TestApi } from '../support/app';

const CLIENTS = 30;

interface RawAnswer {
  /** The status line and headers, then the body; empty when the server closed without answering. */
  text: string;
  /** The server closed the connection (as opposed to the test giving up). */
  closedByServer: boolean;
}

/**
 * Sends the request head, then one byte of body every `everyMs` until the server answers or closes,
 * or `giveUpMs` passes.
 */
function trickle(api: TestApi, head: string, everyMs: number, giveUpMs: number): Promise<RawAnswer> {
  const { port } = new URL(api.url);
  return new Promise((resolve) => {
    const socket: Socket = connect(Number(port), '127.0.0.1');
    let text = '';
    let finished = false;
    const finish = (closedByServer: boolean): void => {
      if (finished) return;
      finished = true;
      clearInterval(drip);
      clearTimeout(giveUp);
      socket.destroy();
      resolve({ text, closedByServer });
    };
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    socket.on('end', () => finish(true));
    socket.on('close', () => finish(true));
    socket.on('error', () => finish(true));
    socket.write(head);
    const drip = setInterval(() => {
      if (socket.writable) socket.write('x');
    }, everyMs);
    const giveUp = setTimeout(() => finish(false), giveUpMs);
  });
}

function envelopeOf(answer: RawAnswer): { status: number; error: any } {
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(answer.text)?.[1] ?? 0);
  const body = answer.text.slice(answer.text.indexOf('\r\n\r\n') + 4);
  try {
    return { status, error: JSON.parse(body).error };
  } catch {
    return { status, error: null };
  }
}

describe('slow request bodies', () => {
  let api: TestApi;
  let account: TestAccount;
  let storage: string;

  beforeAll(async () => {
    storage = await mkdtemp(join(tmpdir(), 'mj-slow-'));
    api = await startApi({
      STORAGE_DIR: storage,
      REQUEST_BODY_MIN_BYTES_PER_SECOND: '1024',
      REQUEST_BODY_RATE_WINDOW_SECONDS: '1',
    });
    account = await createAccount(api, { plan: 'enterprise', credits: 100 });
  });
  afterAll(async () => {
    await api?.close();
  });

  async function partialFiles(): Promise<string[]> {
    const dir = join(storage, 'uploads', account.accountId);
    if (!existsSync(dir)) return [];
    return (await readdir(dir)).filter((name) => name.endsWith('.partial'));
  }

  it(`${CLIENTS} uploads sending a byte every 500 ms: each is answered 408 and closed; no partial file is left`, async () => {
    const head =
      `POST /v1/uploads HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${account.apiKey}\r\n` +
      `Content-Type: video/mp4\r\nContent-Length: 1000000\r\n\r\n`;
    const started = trickle(api, head, 500, 30_000);
    // The first upload's partial file exists while its body trickles in (what the clients hold open).
    for (let i = 0; i < 50 && (await partialFiles()).length === 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect((await partialFiles()).length).toBe(1);
    const answers = await Promise.all([
      started,
      ...Array.from({ length: CLIENTS - 1 }, () => trickle(api, head, 500, 30_000)),
    ]);
    expect(answers.filter((answer) => !answer.closedByServer).length).toBe(0);
    for (const answer of answers) {
      const { status, error } = envelopeOf(answer);
      expect({ status, code: error?.code, retryable: error?.retryable }).toEqual({
        status: 408,
        code: 'request_timeout',
        retryable: true,
      });
      expect(answer.text).toMatch(/\r\nconnection: close\r\n/i);
    }
    // Removed as the server drops each stream, a moment after the answer.
    for (let i = 0; i < 50 && (await partialFiles()).length > 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await partialFiles()).toEqual([]);
  });

  it('a JSON body sent a byte every 500 ms is answered 408 request_timeout', async () => {
    const head =
      `POST /v1/sdr2hdr/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${account.apiKey}\r\n` +
      `Content-Type: application/json\r\nContent-Length: 5000\r\n\r\n`;
    const answer = await trickle(api, head, 500, 30_000);
    expect(answer.closedByServer).toBe(true);
    const { status, error } = envelopeOf(answer);
    expect({ status, code: error?.code }).toEqual({ status: 408, code: 'request_timeout' });
    expect(error.doc_url).toMatch(/errors\.html#request_timeout$/);
  });

  it('an upload at a normal rate is stored', async () => {
    const file = await readFile(await sdrMp4({ width: 160, height: 90, seconds: 1 }));
    const response = await call(api, 'POST', '/v1/uploads', {
      key: account.apiKey,
      rawBody: file,
      headers: { 'content-type': 'video/mp4' },
    });
    expect(response.status).toBe(201);
    expect(response.body.size_bytes).toBe(file.length);
  });
});
