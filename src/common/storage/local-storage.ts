// The local-folder backend (STORAGE_BACKEND=local, the default): everything under STORAGE_DIR, which
// the API and every worker must share (one machine, or a network file system).
import { createReadStream, createWriteStream } from 'node:fs';
import { copyFile, mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { MeteredStream } from './metered-stream';
import type { ByteRange, ObjectEntry, Storage, StoredObject } from './storage';

const PARTIAL_SUFFIX = '.partial';

export class LocalStorage implements Storage {
  readonly backend = 'local';

  constructor(private readonly root: string) {}

  async prepare(): Promise<void> {
    await mkdir(this.root, { recursive: true });
  }

  private path(key: string): string {
    const path = resolve(this.root, key);
    // Keys are ours, but a path must never leave the root whatever a key contains.
    if (!path.startsWith(resolve(this.root) + sep)) throw new Error(`storage key escapes the root: ${key}`);
    return path;
  }

  async write(key: string, source: Readable, maxBytes: number): Promise<StoredObject> {
    const path = this.path(key);
    const partial = `${path}${PARTIAL_SUFFIX}`;
    await mkdir(dirname(path), { recursive: true });
    const meter = new MeteredStream(maxBytes);
    try {
      await pipeline(source, meter, createWriteStream(partial));
      await rename(partial, path);
    } catch (error) {
      await rm(partial, { force: true });
      throw error;
    }
    return meter.result();
  }

  /**
   * A rename when the file is on the same file system as STORAGE_DIR (a worker's output: no byte
   * copied, atomic); otherwise a kernel copy to a partial file, renamed once complete.
   */
  async writeFile(key: string, source: string): Promise<{ sizeBytes: number }> {
    const path = this.path(key);
    const { size } = await stat(source);
    await mkdir(dirname(path), { recursive: true });
    try {
      await rename(source, path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
      const partial = `${path}${PARTIAL_SUFFIX}`;
      try {
        await copyFile(source, partial);
        await rename(partial, path);
      } catch (failure) {
        await rm(partial, { force: true });
        throw failure;
      }
    }
    return { sizeBytes: size };
  }

  async read(key: string, range?: ByteRange): Promise<Readable | null> {
    if ((await this.size(key)) === null) return null;
    return createReadStream(this.path(key), range);
  }

  async size(key: string): Promise<number | null> {
    try {
      return (await stat(this.path(key))).size;
    } catch {
      return null;
    }
  }

  async remove(key: string): Promise<void> {
    await rm(this.path(key), { force: true });
  }

  async removeMany(keys: string[]): Promise<void> {
    await Promise.all(keys.map((key) => this.remove(key)));
  }

  mediaLocation(key: string): Promise<string> {
    return Promise.resolve(this.path(key));
  }

  async localFile(key: string): Promise<string | null> {
    return (await this.size(key)) === null ? null : this.path(key);
  }

  async *list(prefix: string): AsyncIterable<ObjectEntry> {
    for await (const entry of this.walk(this.root)) {
      if (entry.key.startsWith(prefix) && !entry.key.endsWith(PARTIAL_SUFFIX)) yield entry;
    }
  }

  close(): void {
    // A folder holds no connection.
  }

  async abortUnfinished(before: Date): Promise<number> {
    let removed = 0;
    for await (const entry of this.walk(this.root)) {
      if (entry.key.endsWith(PARTIAL_SUFFIX) && entry.lastModified < before) {
        await rm(this.path(entry.key), { force: true });
        removed += 1;
      }
    }
    return removed;
  }

  private async *walk(dir: string): AsyncIterable<ObjectEntry> {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        yield* this.walk(path);
      } else if (entry.isFile()) {
        const info = await stat(path).catch(() => null); // removed meanwhile: nothing to list
        if (info)
          yield { key: relative(this.root, path).split(sep).join('/'), sizeBytes: info.size, lastModified: info.mtime };
      }
    }
  }
}
