// The built dashboard (dashboard/dist), read into memory once at start-up (common/http/static-files.ts
// keeps a gzip copy of each text file): a few hundred kilobytes, served without touching the disk again.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { staticFile, type StaticFile } from '../common/http/static-files';

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
}

/**
 * The built dashboard's files by their path under /dashboard/ (e.g. `index.html`,
 * `assets/index-3f2a.js`); empty when not built. Content-hashed names under assets/ never change.
 */
export function loadDashboardFiles(dir: string): Map<string, StaticFile> {
  const files = new Map<string, StaticFile>();
  if (!existsSync(join(dir, 'index.html'))) return files;
  for (const path of walk(dir)) {
    const name = relative(dir, path).split(sep).join('/');
    files.set(name, staticFile(name, readFileSync(path), name.startsWith('assets/')));
  }
  return files;
}
