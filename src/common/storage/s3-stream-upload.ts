// Streams a body into one S3 object as a multipart upload (one PutObject when it fits in one part),
// hashing it and enforcing a size limit on the way. Each chunk is copied once, straight into a part
// buffer taken from a small pool that is reused as parts are stored: lib-storage's Upload collected
// the chunks of each part and joined them into a fresh buffer (Buffer.concat), so every byte was
// allocated twice and, in the API's larger heap, the external memory churn cost a full GC every few
// parts (bench/storage.ts, README "Performance"). The body keeps being read into the spare buffer
// while `partsInFlight` parts are being stored.
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  PutObjectCommand,
  UploadPartCommand,
  type CompletedPart,
  type S3Client,
} from '@aws-sdk/client-s3';
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { SizeLimitExceeded, type StoredObject } from './storage';

export interface StreamUploadOptions {
  /** At least 5 MiB (S3's minimum for every part but the last). */
  partBytes: number;
  partsInFlight: number;
  /** What a failure of the store becomes (a body's own failure is thrown as it is). */
  storeError: (error: unknown) => unknown;
}

/** A failure of the store, told apart from the body's own failures (client gone, over the limit). */
class StoreFailure extends Error {}

export async function streamUpload(
  client: S3Client,
  target: { Bucket: string; Key: string },
  source: Readable,
  maxBytes: number,
  options: StreamUploadOptions,
): Promise<StoredObject> {
  const { partBytes, partsInFlight } = options;
  const hash = createHash('sha256');
  let bytes = 0;
  // Part buffers: one filling (`part`) plus up to `partsInFlight` being stored; stored ones come back to `spare`.
  const spare: Buffer[] = [];
  let part: Buffer | null = null;
  let filled = 0;
  let partNumber = 0;
  let uploadId = null as Promise<string> | null; // (set by the first part sent)
  const inFlight = new Set<Promise<void>>();
  const stored: CompletedPart[] = [];
  let failure = null as StoreFailure | null; // (set by a part that failed)

  const store = async <T>(action: () => Promise<T>): Promise<T> => {
    try {
      return await action();
    } catch (error) {
      throw new StoreFailure('object storage call failed', { cause: error });
    }
  };
  const createUpload = async (): Promise<string> => {
    const created = await client.send(new CreateMultipartUploadCommand(target));
    if (!created.UploadId) throw new Error('CreateMultipartUpload answered without an UploadId');
    return created.UploadId;
  };
  const send = (buffer: Buffer, length: number): void => {
    const PartNumber = (partNumber += 1);
    const sending: Promise<void> = store(async () => {
      const UploadId = await (uploadId ??= createUpload());
      // A Buffer body is signed with its SHA-256 (as lib-storage sends parts) and resent as is on a retry.
      const answer = await client.send(
        new UploadPartCommand({ ...target, UploadId, PartNumber, Body: buffer.subarray(0, length) }),
      );
      if (!answer.ETag) throw new Error(`UploadPart ${PartNumber} answered without an ETag`);
      stored.push({ PartNumber, ETag: answer.ETag });
      spare.push(buffer);
    })
      .catch((error: unknown) => void (failure ??= error as StoreFailure))
      .finally(() => inFlight.delete(sending));
    inFlight.add(sending);
  };
  /** Waits for a free slot, then sends the part (stored parts give their buffer back to `spare`). */
  const sendWhenFree = async (buffer: Buffer, length: number): Promise<void> => {
    while (inFlight.size >= partsInFlight) await Promise.race(inFlight);
    if (failure) throw failure;
    send(buffer, length);
  };
  const settle = async (): Promise<void> => {
    while (inFlight.size > 0) await Promise.race(inFlight);
    if (failure) throw failure;
  };

  try {
    for await (const data of source as AsyncIterable<Buffer | string>) {
      const chunk = typeof data === 'string' ? Buffer.from(data) : data;
      bytes += chunk.length;
      if (bytes > maxBytes) throw new SizeLimitExceeded(maxBytes);
      hash.update(chunk);
      for (let offset = 0; offset < chunk.length;) {
        // A full part is sent only once more bytes follow: a body of one part is one PutObject.
        if (part && filled === partBytes) {
          await sendWhenFree(part, filled);
          part = null;
        }
        if (!part) {
          // Uninitialised memory is fine: only the bytes copied into it are ever sent.
          part = spare.pop() ?? Buffer.allocUnsafeSlow(partBytes);
          filled = 0;
        }
        const copied = chunk.copy(part, filled, offset);
        filled += copied;
        offset += copied;
      }
      if (failure) throw failure;
    }
    if (partNumber === 0) {
      await store(() =>
        client.send(new PutObjectCommand({ ...target, Body: part ? part.subarray(0, filled) : Buffer.alloc(0) })),
      );
    } else {
      await sendWhenFree(part!, filled);
      part = null;
      await settle();
      const UploadId = await uploadId!;
      stored.sort((a, b) => a.PartNumber! - b.PartNumber!);
      await store(() =>
        client.send(new CompleteMultipartUploadCommand({ ...target, UploadId, MultipartUpload: { Parts: stored } })),
      );
    }
  } catch (error) {
    // Nothing is kept: let the parts on their way finish, then abort the multipart upload (its parts go
    // with it). An abort that fails leaves it to the sweeper (Storage.abortUnfinished). Leaving the
    // loop early destroyed the body already (a server request keeps its socket for the answer).
    while (inFlight.size > 0) await Promise.race(inFlight);
    if (uploadId) {
      // No id (its creation failed): nothing to abort. An abort that fails is dropped on purpose: the
      // caller gets the failure that stopped the upload, and the sweeper removes the unfinished one.
      const UploadId = await uploadId.catch(() => null);
      if (UploadId) await client.send(new AbortMultipartUploadCommand({ ...target, UploadId })).catch(() => undefined);
    }
    throw error instanceof StoreFailure ? options.storeError(error.cause) : error;
  }
  return { sizeBytes: bytes, sha256: hash.digest('hex') };
}
