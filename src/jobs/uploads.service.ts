import { Inject, Injectable } from '@nestjs/common';
import type { Readable } from 'node:stream';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { ApiError } from '../common/errors';
import { newId } from '../common/ids';
import { SizeLimitExceeded, STORAGE, type Storage } from '../common/storage/storage';
import { UploadsRepository, type UploadStorage } from './uploads.repository';

export const UPLOAD_TTL_HOURS = 24;

export interface UploadView {
  object: 'upload';
  upload_id: string;
  /** The name it was uploaded under (`?filename=`); null when none was given. */
  filename: string | null;
  size_bytes: number;
  sha256: string;
  content_type: string | null;
  created_at: string;
  expires_at: string;
}

@Injectable()
export class UploadsService {
  constructor(
    private readonly uploads: UploadsRepository,
    @Inject(STORAGE) private readonly storage: Storage,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Streams the body to storage, hashing on the way and stopping at the size limit (nothing is
   * kept then); the whole file is never held in memory.
   */
  async create(
    accountId: string,
    body: Readable,
    contentType: string | null,
    declaredLength: number | null,
    filename: string | null = null,
  ): Promise<UploadView> {
    const limit = this.config.maxUploadBytes;
    const tooLarge = () =>
      new ApiError('file_too_large', {
        details: { max_upload_bytes: limit },
        message: `The file is larger than the upload limit of ${limit} bytes.`,
      });
    if (declaredLength !== null && declaredLength > limit) {
      body.resume(); // drain, so the connection can answer
      throw tooLarge();
    }
    // The plan's bound on bytes held in uploads: a body that says it will not fit is refused unread, and no
    // body is stored past what is left (a chunked one is stopped there).
    const before = await this.uploads.storage(accountId);
    const left = Math.max(0, before.limit - before.used);
    if (declaredLength !== null && declaredLength > left) {
      body.resume();
      throw storageFull(before, declaredLength);
    }
    const id = newId('upl');
    const key = `uploads/${accountId}/${id}`;
    let stored;
    try {
      stored = await this.storage.write(key, body, Math.min(limit, left));
    } catch (error) {
      if (error instanceof SizeLimitExceeded) {
        if (left < limit) throw storageFull(await this.uploads.storage(accountId), null);
        throw tooLarge();
      }
      throw error;
    }
    if (stored.sizeBytes === 0) {
      await this.storage.remove(key);
      throw new ApiError('missing_parameter', {
        param: 'body',
        message: 'The upload body is empty: send the file as the request body.',
      });
    }
    if (await this.uploads.isBlocked(stored.sha256)) {
      await this.storage.remove(key);
      throw new ApiError('content_policy_violation', { param: 'body' });
    }
    // Judged again where uploads of the account queue: another upload may have finished meanwhile.
    const recorded = await this.uploads.insertWithinStorage({
      id,
      accountId,
      storageKey: key,
      sizeBytes: stored.sizeBytes,
      sha256: stored.sha256,
      contentType,
      filename,
      ttlHours: UPLOAD_TTL_HOURS,
    });
    if ('refused' in recorded) {
      await this.storage.remove(key);
      throw storageFull(recorded.refused, stored.sizeBytes);
    }
    const row = recorded.row;
    return {
      object: 'upload',
      upload_id: row.id,
      filename: row.filename,
      size_bytes: Number(row.size_bytes),
      sha256: row.sha256,
      content_type: row.content_type,
      created_at: row.created_at.toISOString(),
      expires_at: row.expires_at.toISOString(),
    };
  }
}

/**
 * The `filename` query of an upload, checked before the body is read: null when absent, else 1–255
 * characters without control characters (400 invalid_parameter, param `filename`, otherwise).
 */
export function uploadFilename(value: unknown): string | null {
  if (value === undefined) return null;
  if (typeof value !== 'string' || value.length === 0 || value.length > 255 || /\p{Cc}/u.test(value)) {
    throw new ApiError('invalid_parameter', {
      param: 'filename',
      message: 'filename must be given once, 1 to 255 characters without control characters (e.g. sunset-trailer.mp4).',
    });
  }
  return value;
}

/** 429 quota_exceeded with the plan's bound and the bytes held (docs/api-decisions.md §4, direct upload). */
function storageFull(held: UploadStorage, sizeBytes: number | null): ApiError {
  const size = sizeBytes === null ? 'This upload' : `This upload of ${sizeBytes} bytes`;
  return new ApiError('quota_exceeded', {
    message:
      `${size} does not fit: your plan lets an account hold ${held.limit} bytes in uploads and it holds ${held.used}. ` +
      `Uploads count until they expire, ${UPLOAD_TTL_HOURS} h after they were made; upgrade your plan for more.`,
    details: { upload_bytes_limit: held.limit, upload_bytes_used: held.used },
  });
}
