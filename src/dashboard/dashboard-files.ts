// The built dashboard (dashboard/dist), read into memory once at start-up with a gzip copy of each
// text file: a few hundred kilobytes, served without touching the disk again.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { gzipSync } from 'node:zlib';

export interface DashboardFile {
  body: Buffer;
  /** Present when gzip makes it smaller. */
  gzip?: Buffer;
  contentType: string;
  etag: string;
  /** Content-hashed names under assets/ never change: cache them for good. */
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

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
}

/** Files by their path under /dashboard/ (e.g. `index.html`, `assets/index-3f2a.js`); empty when not built. */
export function loadDashboardFiles(dir: string): Map<string, DashboardFile> {
  const files = new Map<string, DashboardFile>();
  if (!existsSync(join(dir, 'index.html'))) return files;
  for (const path of walk(dir)) {
    const name = relative(dir, path).split(sep).join('/');
    const extension = extname(name);
    const body = readFileSync(path);
    const gzip = COMPRESSIBLE.has(extension) ? gzipSync(body, { level: 9 }) : undefined;
    files.set(name, {
      body,
      gzip: gzip && gzip.length < body.length ? gzip : undefined,
      contentType: TYPES[extension] ?? 'application/octet-stream',
      etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
      immutable: name.startsWith('assets/'),
    });
  }
  return files;
}
