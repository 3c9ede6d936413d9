// Stopping an API (SIGTERM, or app.close()) is graceful but bounded: a request already under way still
// gets its answer, and a client that neither finishes its request nor goes away cannot hold the process
// open past SHUTDOWN_GRACE_SECONDS — before this, close() waited on such a connection without end (the
// full test run hung in a suite's teardown on a client socket still open to the API's port).
import { connect, type Socket } from 'node:net';
import { createAccount, startApi } from '../support/app';

const GRACE_SECONDS = 2;

/** A raw HTTP/1.1 client: sends `head` and the first `sent` bytes of a `length`-byte body, then waits. */
function partialUpload(port: number, key: string, length: number, sent: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(
        `POST /v1/uploads HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-Api-Key: ${key}\r\n` +
          `Content-Type: video/mp4\r\nContent-Length: ${length}\r\n\r\n`,
      );
      socket.write(Buffer.alloc(sent, 1));
      resolve(socket);
    });
    socket.on('error', reject);
  });
}

/** Everything the server sends on `socket` until it closes the connection. */
function received(socket: Socket): Promise<string> {
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  return new Promise((resolve) => socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1'))));
}

describe('stopping the API', () => {
  it('answers a request under way, and closes a connection that stalls once SHUTDOWN_GRACE_SECONDS have passed', async () => {
    const api = await startApi({
      SHUTDOWN_GRACE_SECONDS: String(GRACE_SECONDS),
      // The slow-body guard would cut the stalled upload by itself: it must not be what ends this test.
      REQUEST_BODY_RATE_WINDOW_SECONDS: '600',
    });
    const account = await createAccount(api);
    const port = Number(new URL(api.url).port);

    const finishing = await partialUpload(port, account.apiKey, 2048, 1024);
    const finishingAnswer = received(finishing);
    const stalled = await partialUpload(port, account.apiKey, 2048, 1024);
    const stalledAnswer = received(stalled);
    // Both requests have reached the API (their bodies are being read) before it is stopped.
    await new Promise((resolve) => setTimeout(resolve, 300));

    const started = Date.now();
    const closed = api.close().then(() => Date.now() - started);
    // The first client sends the rest of its body during the grace period: it is answered as usual.
    await new Promise((resolve) => setTimeout(resolve, 300));
    finishing.write(Buffer.alloc(1024, 1));
    expect(await finishingAnswer).toMatch(/^HTTP\/1\.1 (201|400|415) /);

    // The second never does: the API stops once the grace period is over, and closes its connection.
    const closedAfterMs = await closed;
    expect(closedAfterMs).toBeGreaterThanOrEqual(GRACE_SECONDS * 1000 - 100);
    expect(closedAfterMs).toBeLessThan(GRACE_SECONDS * 1000 + 3000);
    expect(await stalledAnswer).toBe('');
    expect(stalled.destroyed).toBe(true);
  }, 60_000);
});
