// The S3-compatible backend (STORAGE_BACKEND=s3): AWS S3, MinIO, R2, Swift's s3api. Keys live under
// S3_PREFIX in S3_BUCKET; nothing needs a folder shared between the API and the workers.
import {
  AbortMultipartUploadCommand,
  CreateBucketCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { createReadStream, createWriteStream } from 'node:fs';
import { readFile, rm, stat } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createS3Client, type S3Settings } from './s3-client';
import { streamUpload } from './s3-stream-upload';
import {
  SizeLimitExceeded,
  StorageUnavailableError,
  type ByteRange,
  type ObjectEntry,
  type Storage,
  type StoredObject,
} from './storage';

/** Multipart part size: S3's minimum is 5 MiB; memory per write is PART_BYTES × (PARALLEL_PARTS + 1). */
export const PART_BYTES = 8 * 1024 * 1024;
export const PARALLEL_PARTS = 3;
const DELETE_BATCH = 1000;
/**
 * A finished file up to this size goes up in one PUT, read into memory first so the SDK's own retries
 * can send it again: on Swift a 10 MiB output took 156 ms against 428 ms as a multipart upload (8 MiB
 * parts, three in flight), 31 MiB 412 against 896 ms (Swift stores each part as an object, then a
 * manifest). Larger files stay multipart (memory stays PART_BYTES × (PARALLEL_PARTS + 1)).
 */
export const SINGLE_PUT_MAX_BYTES = 64 * 1024 * 1024;

interface SdkError {
  name?: string;
  $metadata?: { httpStatusCode?: number };
}

function status(error: unknown): number | undefined {
  return (error as SdkError | null)?.$metadata?.httpStatusCode;
}

function isNotFound(error: unknown): boolean {
  const name = (error as SdkError | null)?.name;
  return status(error) === 404 || name === 'NoSuchKey' || name === 'NotFound';
}

/** No answer (refused, reset, timed out) or a 5xx: the store is unavailable, the request may be retried. */
function isTransient(error: unknown): boolean {
  if (error instanceof SizeLimitExceeded || error instanceof StorageUnavailableError) return false;
  const code = status(error);
  return code === undefined || code >= 500 || (error as SdkError | null)?.name === 'TimeoutError';
}

export class S3Storage implements Storage {
  readonly backend = 's3';
  private readonly client: S3Client;

  constructor(private readonly settings: S3Settings) {
    this.client = createS3Client(settings);
  }

  close(): void {
    // Its agent keeps sockets alive for the next call; unreferenced, they outlive app.close() otherwise.
    this.client.destroy();
  }

  private full(key: string): string {
    return `${this.settings.prefix}${key}`;
  }

  /** Runs an SDK call, turning an outage into StorageUnavailableError (503 / upstream_error). */
  private async call<T>(what: string, action: () => Promise<T>): Promise<T> {
    try {
      return await action();
    } catch (error) {
      if (isTransient(error)) {
        throw new StorageUnavailableError(`object storage unavailable (${what}): ${(error as Error).message}`, {
          cause: error,
        });
      }
      throw error;
    }
  }

  async prepare(): Promise<void> {
    const Bucket = this.settings.bucket;
    try {
      await this.call('head bucket', () => this.client.send(new HeadBucketCommand({ Bucket })));
    } catch (error) {
      if (!isNotFound(error)) throw error;
      await this.call('create bucket', () => this.client.send(new CreateBucketCommand({ Bucket }))).catch(
        (failure: unknown) => {
          // Another process created it between our HEAD and this call: that is what we wanted.
          const name = (failure as SdkError).name;
          if (name !== 'BucketAlreadyOwnedByYou' && name !== 'BucketAlreadyExists') throw failure;
        },
      );
    }
  }

  async write(key: string, source: Readable, maxBytes: number): Promise<StoredObject> {
    // Any failure (over the limit, client gone, store down) aborts the multipart upload: nothing is kept.
    // The body's own failure is thrown as it is; the store's becomes StorageUnavailableError when transient.
    return streamUpload(this.client, { Bucket: this.settings.bucket, Key: this.full(key) }, source, maxBytes, {
      partBytes: PART_BYTES,
      partsInFlight: PARALLEL_PARTS,
      storeError: (error) =>
        isTransient(error)
          ? new StorageUnavailableError(`object storage unavailable (upload)`, { cause: error })
          : error,
    });
  }

  async writeFile(key: string, path: string): Promise<{ sizeBytes: number }> {
    const { size } = await stat(path);
    if (size > SINGLE_PUT_MAX_BYTES) {
      return { sizeBytes: (await this.write(key, createReadStream(path), size)).sizeBytes };
    }
    const body = await readFile(path);
    await this.call('put', () =>
      this.client.send(new PutObjectCommand({ Bucket: this.settings.bucket, Key: this.full(key), Body: body })),
    );
    return { sizeBytes: body.length };
  }

  async read(key: string, range?: ByteRange): Promise<Readable | null> {
    try {
      const response = await this.call('get', () =>
        this.client.send(
          new GetObjectCommand({
            Bucket: this.settings.bucket,
            Key: this.full(key),
            Range: range ? `bytes=${range.start}-${range.end}` : undefined,
          }),
        ),
      );
      return response.Body as Readable;
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  }

  async size(key: string): Promise<number | null> {
    try {
      const head = await this.call('head', () =>
        this.client.send(new HeadObjectCommand({ Bucket: this.settings.bucket, Key: this.full(key) })),
      );
      return head.ContentLength ?? 0;
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  }

  async remove(key: string): Promise<void> {
    await this.call('delete', () =>
      this.client.send(new DeleteObjectCommand({ Bucket: this.settings.bucket, Key: this.full(key) })),
    );
  }

  async removeMany(keys: string[]): Promise<void> {
    for (let start = 0; start < keys.length; start += DELETE_BATCH) {
      const batch = keys.slice(start, start + DELETE_BATCH);
      const result = await this.call('delete many', () =>
        this.client.send(
          new DeleteObjectsCommand({
            Bucket: this.settings.bucket,
            Delete: { Objects: batch.map((key) => ({ Key: this.full(key) })), Quiet: true },
          }),
        ),
      );
      const failed = (result.Errors ?? []).filter((error) => error.Code !== 'NoSuchKey');
      if (failed.length > 0) {
        throw new StorageUnavailableError(
          `object storage refused to delete ${failed.length} object(s): ${failed[0].Code} ${failed[0].Message}`,
        );
      }
    }
  }

  mediaLocation(key: string, ttlSeconds: number): Promise<string> {
    return getSignedUrl(this.client, new GetObjectCommand({ Bucket: this.settings.bucket, Key: this.full(key) }), {
      expiresIn: ttlSeconds,
    });
  }

  async localFile(key: string, scratchPath: string, signal?: AbortSignal): Promise<string | null> {
    let response;
    try {
      response = await this.call('get', () =>
        this.client.send(new GetObjectCommand({ Bucket: this.settings.bucket, Key: this.full(key) }), {
          abortSignal: signal,
        }),
      );
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
    try {
      await this.call('download', () =>
        pipeline(response.Body as Readable, createWriteStream(scratchPath), { signal }),
      );
    } catch (error) {
      await rm(scratchPath, { force: true });
      throw error;
    }
    return scratchPath;
  }

  async *list(prefix: string): AsyncIterable<ObjectEntry> {
    let ContinuationToken: string | undefined;
    do {
      const page = await this.call('list', () =>
        this.client.send(
          new ListObjectsV2Command({ Bucket: this.settings.bucket, Prefix: this.full(prefix), ContinuationToken }),
        ),
      );
      for (const object of page.Contents ?? []) {
        if (!object.Key) continue;
        yield {
          key: object.Key.slice(this.settings.prefix.length),
          sizeBytes: object.Size ?? 0,
          lastModified: object.LastModified ?? new Date(0),
        };
      }
      ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (ContinuationToken);
  }

  async abortUnfinished(before: Date): Promise<number> {
    let aborted = 0;
    let KeyMarker: string | undefined;
    let UploadIdMarker: string | undefined;
    do {
      const page = await this.call('list uploads', () =>
        this.client.send(
          new ListMultipartUploadsCommand({
            Bucket: this.settings.bucket,
            Prefix: this.settings.prefix || undefined,
            KeyMarker,
            UploadIdMarker,
          }),
        ),
      );
      for (const upload of page.Uploads ?? []) {
        if (!upload.Key || !upload.UploadId || (upload.Initiated && upload.Initiated >= before)) continue;
        await this.call('abort upload', () =>
          this.client.send(
            new AbortMultipartUploadCommand({
              Bucket: this.settings.bucket,
              Key: upload.Key,
              UploadId: upload.UploadId,
            }),
          ),
        );
        aborted += 1;
      }
      KeyMarker = page.IsTruncated ? page.NextKeyMarker : undefined;
      UploadIdMarker = page.IsTruncated ? page.NextUploadIdMarker : undefined;
    } while (KeyMarker);
    return aborted;
  }
}
