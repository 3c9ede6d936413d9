// Where uploads and outputs live. Local disk under STORAGE_DIR today; the interface is small so an
// S3-compatible store can replace it without touching callers.
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

export class SizeLimitExceeded extends Error {
  constructor(readonly limit: number) {
    super(`stream exceeded ${limit} bytes`);
  }
}

export interface StoredObject {
  sizeBytes: number;
  sha256: string;
}

export interface Storage {
  /** Streams `source` into `key`, hashing on the way; over `maxBytes` it stops and keeps nothing. */
  write(key: string, source: Readable, maxBytes: number): Promise<StoredObject>;
  /** A local path media tools can read (for a remote store: a downloaded copy). */
  localPath(key: string): string;
  read(key: string, range?: { start: number; end: number }): Readable;
  size(key: string): Promise<number | null>;
  remove(key: string): Promise<void>;
}

export class LocalStorage implements Storage {
  constructor(private readonly root: string) {}

  localPath(key: string): string {
    const path = resolve(this.root, key);
    // Keys are ours, but a path must never leave the root whatever a key contains.
    if (!path.startsWith(resolve(this.root) + sep)) throw new Error(`storage key escapes the root: ${key}`);
    return path;
  }

  async write(key: string, source: Readable, maxBytes: number): Promise<StoredObject> {
    const path = this.localPath(key);
    const partial = `${path}.partial`;
    await mkdir(dirname(path), { recursive: true });
    const hash = createHash('sha256');
    let size = 0;
    const meter = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        size += chunk.length;
        if (size > maxBytes) return callback(new SizeLimitExceeded(maxBytes));
        hash.update(chunk);
        callback(null, chunk);
      },
    });
    try {
      await pipeline(source, meter, createWriteStream(partial));
      await rename(partial, path);
    } catch (error) {
      await rm(partial, { force: true });
      throw error;
    }
    return { sizeBytes: size, sha256: hash.digest('hex') };
  }

  read(key: string, range?: { start: number; end: number }): Readable {
    return createReadStream(this.localPath(key), range);
  }

  async size(key: string): Promise<number | null> {
    try {
      return (await stat(this.localPath(key))).size;
    } catch {
      return null;
    }
  }

  async remove(key: string): Promise<void> {
    await rm(this.localPath(key), { force: true });
  }
}

export const STORAGE = Symbol('STORAGE');

export function storageKey(...parts: string[]): string {
  return join(...parts);
}
