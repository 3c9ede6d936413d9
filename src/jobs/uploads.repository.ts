import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { row } from '../common/database/sql';

/** The plan's bound on the bytes an account holds in live uploads, and what it holds now. */
export interface UploadStorage {
  limit: number;
  used: number;
}

export interface UploadRow {
  id: string;
  account_id: string;
  storage_key: string;
  size_bytes: string;
  sha256: string;
  content_type: string | null;
  filename: string | null;
  created_at: Date;
  expires_at: Date;
}

@Injectable()
export class UploadsRepository {
  constructor(private readonly db: DataSource) {}

  /** What the account may hold and holds now (live uploads: not deleted, not expired). */
  async storage(accountId: string, manager: EntityManager = this.db.manager): Promise<UploadStorage> {
    const found = (await row<{ limit: string; used: string }>(
      manager,
      `SELECT p.upload_storage_bytes AS limit,
              (SELECT COALESCE(sum(u.size_bytes), 0) FROM uploads u
                WHERE u.account_id = a.id AND u.deleted_at IS NULL AND u.expires_at > now()) AS used
         FROM accounts a JOIN plans p ON p.id = a.plan_id WHERE a.id = $1`,
      [accountId],
    ))!;
    return { limit: Number(found.limit), used: Number(found.used) };
  }

  /**
   * Records the stored upload if it fits the account's bound, else returns the bound. Uploads of one account
   * finish one at a time here (a transaction-scoped advisory lock), so two that fit only one at a time cannot
   * both be recorded.
   */
  async insertWithinStorage(upload: {
    id: string;
    accountId: string;
    storageKey: string;
    sizeBytes: number;
    sha256: string;
    contentType: string | null;
    filename: string | null;
    ttlHours: number;
  }): Promise<{ row: UploadRow } | { refused: UploadStorage }> {
    return this.db.transaction(async (manager) => {
      await manager.query(`SELECT pg_advisory_xact_lock(hashtextextended('upload_storage:' || $1, 0))`, [
        upload.accountId,
      ]);
      const held = await this.storage(upload.accountId, manager);
      if (held.used + upload.sizeBytes > held.limit) return { refused: held };
      const inserted = (await row<UploadRow>(
        manager,
        `INSERT INTO uploads (id, account_id, storage_key, size_bytes, sha256, content_type, filename, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, now() + make_interval(hours => $8))
         RETURNING id, account_id, storage_key, size_bytes, sha256, content_type, filename, created_at, expires_at`,
        [
          upload.id,
          upload.accountId,
          upload.storageKey,
          upload.sizeBytes,
          upload.sha256,
          upload.contentType,
          upload.filename,
          upload.ttlHours,
        ],
      ))!;
      return { row: inserted };
    });
  }

  /**
   * A live upload of this account and whether its content is on the block list (one read, on the
   * submit path); another account's upload does not exist for the caller.
   */
  find(accountId: string, id: string): Promise<(UploadRow & { blocked: boolean }) | null> {
    return row<UploadRow & { blocked: boolean }>(
      this.db,
      `SELECT id, account_id, storage_key, size_bytes, sha256, content_type, filename, created_at, expires_at,
              EXISTS (SELECT 1 FROM blocked_content b WHERE b.sha256 = uploads.sha256) AS blocked
         FROM uploads
        WHERE id = $1 AND account_id = $2 AND deleted_at IS NULL AND expires_at > now()`,
      [id, accountId],
      { prepared: 'upload-find' },
    );
  }

  async isBlocked(sha256: string): Promise<boolean> {
    return (await row(this.db, `SELECT 1 FROM blocked_content WHERE sha256 = $1`, [sha256])) !== null;
  }
}
