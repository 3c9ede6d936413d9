// Where uploads and outputs live: one small interface, two backends (local-storage.ts: a folder,
// the default; s3-storage.ts: S3-compatible object storage). Callers never know which one runs.
import type { Readable } from 'node:stream';

export class SizeLimitExceeded extends Error {
  constructor(readonly limit: number) {
    super(`stream exceeded ${limit} bytes`);
  }
}

/**
 * The store did not answer in time, refused the connection or answered 5xx: worth retrying later.
 * The API answers 503 service_unavailable (common/errors/classify.ts knows this name); a worker
 * ends the item with upstream_error (retryable).
 */
export class StorageUnavailableError extends Error {
  override readonly name = 'StorageUnavailableError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

export interface StoredObject {
  sizeBytes: number;
  sha256: string;
}

export interface ObjectEntry {
  key: string;
  sizeBytes: number;
  lastModified: Date;
}

export interface ByteRange {
  start: number;
  end: number;
}

export interface Storage {
  readonly backend: 'local' | 's3';
  /** At start-up: the folder or bucket exists (a bucket is created when missing). */
  prepare(): Promise<void>;
  /**
   * Streams `source` into `key`, hashing on the way; over `maxBytes` or on any failure it stops and
   * keeps nothing (an S3 multipart upload is aborted).
   */
  write(key: string, source: Readable, maxBytes: number): Promise<StoredObject>;
  /**
   * Stores a finished file of the caller's own (in its temp folder) under `key`, all or nothing. The
   * file may be moved rather than copied (local backend, same file system): the caller must not use
   * `path` afterwards. No hash: a worker's outputs need only their size.
   */
  writeFile(key: string, path: string): Promise<{ sizeBytes: number }>;
  /** The object's bytes (or a range of them); null when it does not exist. */
  read(key: string, range?: ByteRange): Promise<Readable | null>;
  size(key: string): Promise<number | null>;
  remove(key: string): Promise<void>;
  removeMany(keys: string[]): Promise<void>;
  /** Something ffprobe can open for the next `ttlSeconds`: the file's path, or a presigned URL. */
  mediaLocation(key: string, ttlSeconds: number): Promise<string>;
  /**
   * A local file with the object's bytes for media tools: the file itself on the local backend,
   * otherwise a copy downloaded to `scratchPath` (inside the caller's own temp folder); null when
   * the object does not exist.
   */
  localFile(key: string, scratchPath: string, signal?: AbortSignal): Promise<string | null>;
  /** Every object whose key starts with `prefix` (for the sweeper). */
  list(prefix: string): AsyncIterable<ObjectEntry>;
  /** Removes unfinished writes (multipart uploads, partial files) begun before `before`; returns how many. */
  abortUnfinished(before: Date): Promise<number>;
  /** At shutdown, after the last call: lets go of connections (the S3 client's kept-alive sockets). */
  close(): void;
}

export const STORAGE = Symbol('STORAGE');

export function uploadKey(accountId: string, uploadId: string): string {
  return `uploads/${accountId}/${uploadId}`;
}

export const OUTPUTS_PREFIX = 'outputs/';

/**
 * `run` tells apart two runs of one item (a worker wrongly thought dead and the one that took the item
 * again): each writes its own object, so neither overwrites or removes the output the other ended the
 * item with.
 */
export function outputKey(accountId: string, jobId: string, index: number, container: string, run?: string): string {
  return `${OUTPUTS_PREFIX}${accountId}/${jobId}/${index}${run ? `-${run}` : ''}.${container}`;
}

/**
 * Where an item's HLS package lives: a prefix (ending in `/`) under which the master playlist is
 * `master.m3u8` and each rendition has a folder of its own (playlist, init segment, media segments).
 * `run` as for outputKey. The asset row of a package stores this prefix as its storage key.
 */
export function packagePrefix(accountId: string, jobId: string, index: number, run?: string): string {
  return `${OUTPUTS_PREFIX}${accountId}/${jobId}/${index}${run ? `-${run}` : ''}.hls/`;
}

/**
 * The job an output key belongs to (outputKey's inverse; for an object of a package, the package's), or null
 * for a key that is not an output.
 */
export function jobOfOutputKey(key: string): string | null {
  const match = /^outputs\/[^/]+\/([^/]+)\/\d+(?:-[0-9A-Za-z]+)?\.(?:[a-z0-9]+|hls\/.+)$/.exec(key);
  return match ? match[1] : null;
}

/** The package prefix (packagePrefix) an object key lies under, or null for a key outside any package. */
export function packageOfKey(key: string): string | null {
  const match = /^(outputs\/[^/]+\/[^/]+\/\d+(?:-[0-9A-Za-z]+)?\.hls\/)./.exec(key);
  return match ? match[1] : null;
}

/** A stored output's key names many objects: a package's prefix (packagePrefix ends with `/`). */
export function isPrefixKey(key: string): boolean {
  return key.endsWith('/');
}

/**
 * Removes stored outputs by their assets' keys: a file's one object, or every object under a package's
 * prefix (listed, then removed in one removeMany).
 */
export async function removeStoredOutputs(storage: Storage, keys: string[]): Promise<void> {
  const objects: string[] = [];
  for (const key of keys) {
    if (!isPrefixKey(key)) objects.push(key);
    else for await (const entry of storage.list(key)) objects.push(entry.key);
  }
  await storage.removeMany(objects);
}

export const SEGMENTS_PREFIX = 'segments/';

/** Where an item's temporary segments live (source parts, encoded parts, audio), removed when the item ends. */
export function segmentsPrefix(jobId: string, index: number): string {
  return `${SEGMENTS_PREFIX}${jobId}/${index}/`;
}

/** The job a segment part belongs to (a key under segmentsPrefix), or null for a key that is not one. */
export function jobOfSegmentKey(key: string): string | null {
  const match = /^segments\/([^/]+)\/\d+\/[^/]+$/.exec(key);
  return match ? match[1] : null;
}
