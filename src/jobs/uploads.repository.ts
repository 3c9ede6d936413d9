import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { row } from '../common/database/sql';

export interface UploadRow {
  id: string;
  account_id: string;
  storage_key: string;
  size_bytes: string;
  sha256: string;
  content_type: string | null;
  created_at: Date;
  expires_at: Date;
}

@Injectable()
export class UploadsRepository {
  constructor(private readonly db: DataSource) {}

  async insert(upload: {
    id: string;
    accountId: string;
    storageKey: string;
    sizeBytes: number;
    sha256: string;
    contentType: string | null;
    ttlHours: number;
  }): Promise<UploadRow> {
    return (await row<UploadRow>(
      this.db,
      `INSERT INTO uploads (id, account_id, storage_key, size_bytes, sha256, content_type, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(hours => $7))
       RETURNING id, account_id, storage_key, size_bytes, sha256, content_type, created_at, expires_at`,
      [
        upload.id,
        upload.accountId,
        upload.storageKey,
        upload.sizeBytes,
        upload.sha256,
        upload.contentType,
        upload.ttlHours,
      ],
    ))!;
  }

  /**
   * A live upload of this account and whether its content is on the block list (one read, on the
   * submit path); another account's upload does not exist for the caller.
   */
  find(accountId: string, id: string): Promise<(UploadRow & { blocked: boolean }) | null> {
    return row<UploadRow & { blocked: boolean }>(
      this.db,
      `SELECT id, account_id, storage_key, size_bytes, sha256, content_type, created_at, expires_at,
              EXISTS (SELECT 1 FROM blocked_content b WHERE b.sha256 = uploads.sha256) AS blocked
         FROM uploads
        WHERE id = $1 AND account_id = $2 AND deleted_at IS NULL AND expires_at > now()`,
      [id, accountId],
    );
  }

  async isBlocked(sha256: string): Promise<boolean> {
    return (await row(this.db, `SELECT 1 FROM blocked_content WHERE sha256 = $1`, [sha256])) !== null;
  }
}
