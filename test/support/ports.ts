import { createServer, type AddressInfo } from 'node:net';

/** A free loopback port, so the API knows its own public URL (signed links, doc_url) before it listens. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
