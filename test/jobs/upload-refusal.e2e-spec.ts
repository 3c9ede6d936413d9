// A refused upload is read as its answer, not as a reset (issue 36 item 12): a client still sending a
// body over the upload limit gets 413 file_too_large, even when it reads only after it has written.
import { connect } from 'node:net';
import { rmSync } from 'node:fs';
import { REFUSED_BODY_DRAIN_BYTES } from '../../src/common/http/refused-body';
import { buildSdk, loadSdk, type Sdk } from '../sdk/support';
import { createAccount, startApi, type TestAccount, type TestApi } from '../support/app';

const MiB = 1024 * 1024;
const TIMES = 20;
const BODY_BYTES = 8 * MiB;

/** A body of `bytes` sent as it is made, without a Content-Length (chunked). */
function streamedBody(bytes: number): ReadableStream<Uint8Array> {
  let left = bytes;
  return new ReadableStream({
    pull(controller) {
      if (left <= 0) return controller.close();
      const size = Math.min(left, 64 * 1024);
      left -= size;
      controller.enqueue(new Uint8Array(size).fill(1));
    },
  });
}

/** What fetch made of each attempt: the status and error code it read, or the error it threw. */
async function fetchOutcomes(send: () => Promise<Response>): Promise<string[]> {
  const outcomes: string[] = [];
  for (let i = 0; i < TIMES; i++) {
    try {
      const response = await send();
      const body = (await response.json()) as { error?: { code?: string } };
      outcomes.push(`${response.status} ${body.error?.code}`);
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause;
      outcomes.push(`threw ${String(error)} (${cause?.code ?? cause})`);
    }
  }
  return outcomes;
}

/**
 * Writes the headers and `bodyBytes` of body (or until the server stops taking it), and reads only then:
 * what a client busy uploading sees. Resolves with the bytes it could read and the socket's error, if any.
 */
function uploadThenRead(
  api: TestApi,
  key: string,
  bodyBytes: number,
  framing: 'length' | 'chunked' = 'length',
): Promise<{ text: string; error?: string; sent: number }> {
  const { port } = new URL(api.url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), '127.0.0.1');
    const received: Buffer[] = [];
    let error: string | undefined;
    socket.pause();
    socket.on('error', (e: NodeJS.ErrnoException) => (error ??= e.code ?? e.message));
    let sent = 0;
    socket.on('close', () => resolve({ text: Buffer.concat(received).toString('latin1'), error, sent }));
    const send = async (): Promise<void> => {
      socket.write(
        `POST /v1/uploads HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Api-Key: ${key}\r\nContent-Type: video/mp4\r\n` +
          (framing === 'length' ? `Content-Length: ${bodyBytes}\r\n\r\n` : 'Transfer-Encoding: chunked\r\n\r\n'),
      );
      const data = Buffer.alloc(64 * 1024, 1);
      const chunk = framing === 'length' ? data : Buffer.concat([Buffer.from('10000\r\n'), data, Buffer.from('\r\n')]);
      for (; sent < bodyBytes && !socket.destroyed && error === undefined; sent += data.length) {
        if (!socket.write(chunk)) {
          const drained = await Promise.race([
            new Promise((r) => socket.once('drain', () => r(true))),
            new Promise((r) => setTimeout(() => r(false), 2000)),
          ]);
          if (!drained) break; // the server stopped reading: read its answer now
        }
      }
      if (framing === 'chunked' && error === undefined && !socket.destroyed) socket.write('0\r\n\r\n');
      socket.on('data', (bytes: Buffer) => received.push(bytes));
      socket.resume();
    };
    socket.on('connect', () => void send());
  });
}

describe('a refused upload', () => {
  let api: TestApi;
  let who: TestAccount;

  let sdkDir: string;
  let sdk: Sdk;

  beforeAll(async () => {
    api = await startApi({ MAX_UPLOAD_BYTES: String(MiB), IP_RATE_LIMIT: '1000' });
    who = await createAccount(api, { plan: 'pro' });
    sdkDir = buildSdk();
    sdk = loadSdk(sdkDir);
  });
  afterAll(async () => {
    await api?.close();
    if (sdkDir) rmSync(sdkDir, { recursive: true, force: true });
  });

  const upload = (body: RequestInit['body'], extra: RequestInit = {}) =>
    fetch(`${api.url}/v1/uploads`, {
      method: 'POST',
      headers: { 'x-api-key': who.apiKey, 'content-type': 'video/mp4' },
      body,
      ...extra,
    });
  const refusedEveryTime = Array<string>(TIMES).fill('413 file_too_large');

  it(`fetch with a declared Content-Length over the limit reads 413 file_too_large, ${TIMES} times of ${TIMES}`, async () => {
    const body = Buffer.alloc(BODY_BYTES, 1);
    expect(await fetchOutcomes(() => upload(body))).toEqual(refusedEveryTime);
  });

  it(`fetch with a streamed (chunked) body over the limit reads 413 file_too_large, ${TIMES} times of ${TIMES}`, async () => {
    const outcomes = await fetchOutcomes(() => upload(streamedBody(BODY_BYTES), { duplex: 'half' } as RequestInit));
    expect(outcomes).toEqual(refusedEveryTime);
  });

  it(`the SDK's upload (no retries) raises file_too_large with status 413, ${TIMES} times of ${TIMES}`, async () => {
    const client = new sdk.MediaJobs({ baseUrl: api.url, apiKey: who.apiKey, maxRetries: 0 });
    const outcomes: string[] = [];
    for (let i = 0; i < TIMES; i++) {
      const error = await client.uploads.create(Buffer.alloc(BODY_BYTES, 1), { contentType: 'video/mp4' }).then(
        () => null,
        (e: unknown) => e as { status?: number; code?: string },
      );
      outcomes.push(`${error?.status} ${error?.code}`);
    }
    expect(outcomes).toEqual(refusedEveryTime);
  });

  it('a raw client that reads only after writing its body gets the 413, not a reset', async () => {
    const result = await uploadThenRead(api, who.apiKey, 8 * MiB);
    expect(result.error).toBeUndefined();
    expect(result.text).toMatch(/^HTTP\/1\.1 413 /);
    expect(result.text).toContain('"file_too_large"');
  });

  it('so does one sending a chunked body (stopped at the limit mid-way)', async () => {
    const result = await uploadThenRead(api, who.apiKey, 8 * MiB, 'chunked');
    expect(result.error).toBeUndefined();
    expect(result.text).toMatch(/^HTTP\/1\.1 413 /);
    expect(result.text).toContain('"file_too_large"');
  });

  it('the draining is bounded: a client that keeps sending is cut off after about REFUSED_BODY_DRAIN_BYTES', async () => {
    const result = await uploadThenRead(api, who.apiKey, 4 * REFUSED_BODY_DRAIN_BYTES);
    expect(result.error).toBeDefined();
    // Past the bound, less what the kernels' socket buffers took in meanwhile.
    expect(result.sent).toBeGreaterThanOrEqual(REFUSED_BODY_DRAIN_BYTES);
    expect(result.sent).toBeLessThan(REFUSED_BODY_DRAIN_BYTES + 32 * MiB);
  });
});
