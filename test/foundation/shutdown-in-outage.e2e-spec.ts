// An API stopped while Redis is unreachable (an operator restarting it during the outage) must let go
// of Redis: no client left behind that keeps reconnecting — it would knock on Redis for ever after
// shutdown and keep the process alive (the full test run once hung on ~31 of them). The real Redis
// stays up; the API reaches it through a loopback proxy that the test takes down, then the test
// listens on the proxy's port for anyone still calling.
import { createServer } from 'node:net';
import { startApi } from '../support/app';
import { TcpProxy } from '../support/tcp-proxy';

const LISTEN_MS = 8000;

describe('shutdown during a Redis outage', () => {
  it('app.close() leaves no Redis client reconnecting', async () => {
    const proxy = await TcpProxy.start(6379);
    // The queue board opens its queues (webhooks, the region's media queue) at start.
    const api = await startApi({ REDIS_URL: `redis://127.0.0.1:${proxy.port}`, REGION: 'shutdown-outage' });
    await proxy.close();
    // Long enough for every client to notice and start its reconnect back-off.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    await api.close();

    let callers = 0;
    const server = createServer((socket) => {
      callers += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(proxy.port, '127.0.0.1', resolve));
    await new Promise((resolve) => setTimeout(resolve, LISTEN_MS));
    await new Promise<void>((resolve) => server.close(() => resolve()));
    expect(callers).toBe(0);
  }, 60_000);
});
