import { Inject, Injectable } from '@nestjs/common';
import type { Readable } from 'node:stream';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { ApiError } from '../common/errors';
import { newId } from '../common/ids';
import { SizeLimitExceeded, STORAGE, type Storage } from '../common/storage/storage';
import { UploadsRepository } from './uploads.repository';

export const UPLOAD_TTL_HOURS = 24;

export interface UploadView {
  object: 'upload';
  upload_id: string;
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
    const id = newId('upl');
    const key = `uploads/${accountId}/${id}`;
    let stored;
    try {
      stored = await this.storage.write(key, body, limit);
    } catch (error) {
      if (error instanceof SizeLimitExceeded) throw tooLarge();
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
    const row = await this.uploads.insert({
      id,
      accountId,
      storageKey: key,
      sizeBytes: stored.sizeBytes,
      sha256: stored.sha256,
      contentType,
      ttlHours: UPLOAD_TTL_HOURS,
    });
    return {
      object: 'upload',
      upload_id: row.id,
      size_bytes: Number(row.size_bytes),
      sha256: row.sha256,
      content_type: row.content_type,
      created_at: row.created_at.toISOString(),
      expires_at: row.expires_at.toISOString(),
    };
  }
}
