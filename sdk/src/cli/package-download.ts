// Saves an HLS package (a job made with output.package "hls") into a folder: the master playlist, every
// media playlist and every segment, found by following the playlists' relative URIs from the job's
// playlist_url (all under one playback token), and written with the same relative layout so
// `<folder>/master.m3u8` plays from disk. A URI that would leave the package — another host, another
// token, `..`, an odd name — stops the download: nothing is ever written outside the folder.
import { createWriteStream } from 'node:fs';
import { mkdir, rename, unlink } from 'node:fs/promises';
import { relative, resolve, sep } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import type { MediaJobs } from '../client.js';

/** A file name, or a folder and a file name, as a package lays them out. */
const PACKAGE_PATH = /^[A-Za-z0-9_-][A-Za-z0-9._-]*(\/[A-Za-z0-9_-][A-Za-z0-9._-]*)?$/;

export class PackageEscapeError extends Error {
  override readonly name = 'PackageEscapeError';
}

/** Every URI a playlist names: its URI lines, and URI="…" attributes (EXT-X-MAP, EXT-X-MEDIA, …). */
export function playlistUris(text: string): string[] {
  const uris: string[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '') continue;
    if (!line.startsWith('#')) {
      uris.push(line);
      continue;
    }
    for (const match of line.matchAll(/\bURI="([^"]*)"/g)) uris.push(match[1] ?? '');
  }
  return uris;
}

/**
 * Where `uri` (named by the playlist at `from`) goes inside the package, relative to its top (the master's
 * folder, `base`); throws PackageEscapeError when it leaves the package.
 */
export function packagePath(base: URL, from: URL, uri: string): string {
  let target: URL;
  try {
    target = new URL(uri, from);
  } catch {
    throw new PackageEscapeError(`the package names an unreadable URI: ${JSON.stringify(uri)}`);
  }
  const inside =
    target.origin === base.origin && target.pathname.startsWith(base.pathname) && target.search === base.search;
  const path = inside ? decodeURIComponent(target.pathname.slice(base.pathname.length)) : '';
  if (!inside || !PACKAGE_PATH.test(path) || path.split('/').some((part) => /^\.+$/.test(part)))
    throw new PackageEscapeError(`refusing a URI outside the package: ${JSON.stringify(uri)}`);
  return path;
}

/** `path` under `folder`, checked once more on the file system's own terms. */
function localPath(folder: string, path: string): string {
  const target = resolve(folder, ...path.split('/'));
  const within = relative(resolve(folder), target);
  if (within === '' || within.startsWith('..') || within.includes(`..${sep}`) || resolve(within) === within)
    throw new PackageEscapeError(`refusing to write outside ${folder}: ${path}`);
  return target;
}

export interface SavedPackage {
  files: number;
  bytes: number;
}

/**
 * Downloads the package whose master playlist is `playlistUrl` into `folder` (created if needed). Each file
 * is written as `<name>.part` and renamed, so a failure leaves no half file under its real name.
 */
export async function downloadPackage(
  client: MediaJobs,
  playlistUrl: string,
  folder: string,
  onFile: (path: string, bytes: number) => void = () => {},
): Promise<SavedPackage> {
  const master = new URL(playlistUrl);
  const base = new URL('./', master);
  base.search = master.search;
  const queue: { path: string; playlist: boolean }[] = [
    { path: packagePath(base, master, master.href), playlist: true },
  ];
  const seen = new Set(queue.map((entry) => entry.path));
  let bytes = 0;
  while (queue.length > 0) {
    const { path, playlist } = queue.shift()!;
    const url = new URL(path, base);
    url.search = base.search;
    const target = localPath(folder, path);
    await mkdir(resolve(target, '..'), { recursive: true });
    const response = await client.assets.download(url.href);
    if (!response.body) throw new Error(`empty body for ${path}`);
    let size: number;
    if (playlist) {
      const text = await response.text();
      // Every URI is checked before anything it names is fetched or written.
      for (const uri of playlistUris(text)) {
        const named = packagePath(base, url, uri);
        if (seen.has(named)) continue;
        seen.add(named);
        queue.push({ path: named, playlist: named.endsWith('.m3u8') });
      }
      size = await writeAtomically(target, Readable.from([Buffer.from(text, 'utf8')]));
    } else {
      size = await writeAtomically(target, Readable.fromWeb(response.body as NodeReadableStream<Uint8Array>));
    }
    bytes += size;
    onFile(path, size);
  }
  return { files: seen.size, bytes };
}

async function writeAtomically(target: string, body: Readable): Promise<number> {
  const partial = `${target}.part`;
  let size = 0;
  body.on('data', (chunk: Buffer) => (size += chunk.length));
  try {
    await pipeline(body, createWriteStream(partial));
    await rename(partial, target);
    return size;
  } catch (error) {
    await unlink(partial).catch(() => undefined);
    throw error;
  }
}
