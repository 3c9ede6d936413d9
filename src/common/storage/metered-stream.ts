// Counts and hashes bytes as they pass, failing with SizeLimitExceeded past a limit: both backends
// compute an upload's SHA-256 and enforce MAX_UPLOAD_BYTES on the way, never holding the whole file.
import { createHash } from 'node:crypto';
import { Transform } from 'node:stream';
import { SizeLimitExceeded, type StoredObject } from './storage';

export class MeteredStream extends Transform {
  private readonly hash = createHash('sha256');
  private bytes = 0;

  constructor(private readonly maxBytes: number) {
    super();
  }

  override _transform(
    chunk: Buffer,
    _encoding: BufferEncoding,
    callback: (error?: Error | null, data?: Buffer) => void,
  ) {
    this.bytes += chunk.length;
    if (this.bytes > this.maxBytes) return callback(new SizeLimitExceeded(this.maxBytes));
    this.hash.update(chunk);
    callback(null, chunk);
  }

  /** Only once the stream has ended. */
  result(): StoredObject {
    return { sizeBytes: this.bytes, sha256: this.hash.digest('hex') };
  }
}
