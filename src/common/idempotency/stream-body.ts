// Idempotency-Key for a POST whose body is a stream (an upload): its hash is known only once the body
// has been read. The key is claimed before reading with a placeholder hash, the body is hashed on its
// way to the handler, and the stored response gets the real hash; a later request with the key reads
// its own body through the same hash before it is answered (replay, or idempotency_conflict).
import { createHash } from 'node:crypto';
import { Transform, pipeline, type Readable } from 'node:stream';
import { requestHash } from './canonical-hash';

/** The hash a stream request's claim holds until its body has been read. */
export const STREAM_CLAIM_HASH = 'stream:in_flight';

/**
 * What a streamed request is compared on: where it went, its query (an upload's `filename`), its
 * Content-Type and its bytes. Without a query the hash is what it was before queries counted.
 */
export function streamRequestHash(
  path: string,
  contentType: string,
  contentSha256: string,
  query: Record<string, unknown> = {},
): string {
  const asked = Object.keys(query).length > 0 ? { query } : {};
  return requestHash('POST', path, { content_type: contentType, content_sha256: contentSha256, ...asked });
}

export interface HashingTap {
  /** The body, passed through unchanged. */
  stream: Readable;
  /** SHA-256 (hex) of everything that passed; complete once the handler has read the body. */
  digest(): string;
}

/** Hashes the body as the handler reads it (an error or abort on either side ends both). */
export function hashingTap(body: Readable): HashingTap {
  const hash = createHash('sha256');
  const tap = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      done(null, chunk);
    },
  });
  pipeline(body, tap, () => undefined); // errors reach the handler through `tap` itself
  let digest: string | undefined;
  return { stream: tap, digest: () => (digest ??= hash.digest('hex')) };
}

/** SHA-256 (hex) of the whole body, or null when it is longer than `limit` bytes (then left unread). */
export async function hashWhole(body: Readable, limit: number): Promise<string | null> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    bytes += chunk.length;
    if (bytes > limit) {
      body.destroy();
      return null;
    }
    hash.update(chunk);
  }
  return hash.digest('hex');
}
