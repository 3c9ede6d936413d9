// A loopback TCP proxy in front of Postgres or Redis, so a test can take a dependency "down" for one
// API instance (connections reset, new ones refused) and bring it back, without touching the real
// server that every other test is using.
import { createServer, connect, type Server, type Socket } from 'node:net';

export class TcpProxy {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  private listenPort = 0;
  /** While stalled, bytes are held (in order) instead of forwarded: see stall(). */
  private held: [Socket, Buffer][] | null = null;

  private constructor(
    private readonly targetPort: number,
    private readonly targetHost: string,
  ) {}

  /** Starts listening on 127.0.0.1 on a free port, forwarding to targetHost:targetPort. */
  static async start(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpProxy> {
    const proxy = new TcpProxy(targetPort, targetHost);
    await proxy.open();
    return proxy;
  }

  get port(): number {
    return this.listenPort;
  }

  get isOpen(): boolean {
    return this.server !== null;
  }

  /** The dependency goes down: the port stops listening (new connections are refused) and every live connection is destroyed. */
  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = null;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    await closed;
  }

  /**
   * The dependency stops answering without closing anything (a partition, a server stuck in a slow
   * command): connections stay open and new ones are accepted, but no byte goes through either way
   * until resume(), which delivers everything held, in order.
   */
  stall(): void {
    this.held ??= [];
  }

  resume(): void {
    const held = this.held ?? [];
    this.held = null;
    for (const [to, chunk] of held) if (!to.destroyed) to.write(chunk);
  }

  /** The dependency comes back on the same port. */
  async reopen(): Promise<void> {
    if (this.server) return;
    await this.open();
  }

  private async open(): Promise<void> {
    const server = createServer((client) => this.forward(client));
    // Right after close() the port may briefly still be held; retry rather than fail the test.
    for (let attempt = 0; ; attempt++) {
      try {
        await new Promise<void>((resolve, reject) => {
          server.once('error', reject);
          server.listen(this.listenPort, '127.0.0.1', () => {
            server.off('error', reject);
            resolve();
          });
        });
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt >= 20) throw error;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    const address = server.address();
    if (!address || typeof address === 'string') throw new Error('proxy has no TCP address');
    this.listenPort = address.port;
    this.server = server;
  }

  private forward(client: Socket): void {
    if (!this.server) {
      client.destroy();
      return;
    }
    const upstream = connect(this.targetPort, this.targetHost);
    this.sockets.add(client);
    this.sockets.add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      this.sockets.delete(client);
      this.sockets.delete(upstream);
    };
    client.on('error', drop);
    upstream.on('error', drop);
    client.on('close', drop);
    upstream.on('close', drop);
    const relay = (from: Socket, to: Socket) =>
      from.on('data', (chunk: Buffer) => (this.held ? this.held.push([to, chunk]) : to.write(chunk)));
    relay(client, upstream);
    relay(upstream, client);
  }
}
