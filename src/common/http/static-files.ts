// Files served from memory — the built dashboard (dashboard/dist) and Swagger UI's assets — each read
// once with a gzip copy of text files, an ETag, and a cache rule: content that never changes under
// its name is cached for good, anything else is revalidated (a 304 costs the browser one round trip).
import { createHash } from 'node:crypto';
import { extname } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';

export interface StaticFile {
  body: Buffer;
  /** Present when gzip makes it smaller. */
  gzip?: Buffer;
  contentType: string;
  etag: string;
  /** Cached for good: the name (or the URL that reaches it) changes whenever the content does. */
  immutable: boolean;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
};
const COMPRESSIBLE = new Set(['.html', '.js', '.css', '.svg', '.json', '.txt']);

/** One file to serve: `name` gives its type (by extension). */
export function staticFile(name: string, body: Buffer, immutable: boolean): StaticFile {
  const extension = extname(name);
  const gzip = COMPRESSIBLE.has(extension) ? gzipSync(body, { level: 9 }) : undefined;
  return {
    body,
    gzip: gzip && gzip.length < body.length ? gzip : undefined,
    contentType: TYPES[extension] ?? 'application/octet-stream',
    etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
    immutable,
  };
}

/** The file, gzipped when the client takes it, or 304 when the client's copy is current. */
export function sendStaticFile(request: FastifyRequest, reply: FastifyReply, file: StaticFile): FastifyReply {
  void reply.header('Cache-Control', file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
  void reply.header('ETag', file.etag).header('Vary', 'Accept-Encoding').type(file.contentType);
  if (request.headers['if-none-match'] === file.etag) return reply.status(304).send();
  const gzip = file.gzip && /\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''));
  if (gzip) void reply.header('Content-Encoding', 'gzip');
  return reply.send(gzip ? file.gzip : file.body);
}
