import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { row as sqlRow } from '../common/database/sql';
import type { PlanLimits, Scope } from './auth-context';
import { PLAN_COLUMNS, planLimitsOf } from './plan-limits';

export interface KeyWithAccount {
  keyId: string;
  accountId: string;
  scopes: Scope[];
  expiresAt: Date | null;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
  accountStatus: 'active' | 'suspended';
  subscriptionStatus: string;
  plan: PlanLimits;
}

export interface ApiKeyRow {
  id: string;
  name: string | null;
  prefix: string;
  scopes: Scope[];
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
  created_at: Date;
}

const KEY_COLUMNS = 'id, name, prefix, scopes, expires_at, revoked_at, last_used_at, created_at';

@Injectable()
export class ApiKeysRepository {
  constructor(private readonly db: DataSource) {}

  /** One indexed read per request: the key, its account's status and its plan's limits. */
  async findByHash(hash: Buffer): Promise<KeyWithAccount | null> {
    const row = await sqlRow<Record<string, unknown>>(
      this.db,
      `SELECT k.id, k.account_id, k.scopes, k.expires_at, k.revoked_at, k.last_used_at, a.status, a.subscription_status,
              ${PLAN_COLUMNS}
         FROM api_keys k JOIN accounts a ON a.id = k.account_id JOIN plans p ON p.id = a.plan_id
        WHERE k.key_hash = $1`,
      [hash],
    );
    if (!row) return null;
    return {
      keyId: row.id as string,
      accountId: row.account_id as string,
      scopes: row.scopes as Scope[],
      expiresAt: row.expires_at as Date | null,
      revokedAt: row.revoked_at as Date | null,
      lastUsedAt: row.last_used_at as Date | null,
      accountStatus: row.status as 'active' | 'suspended',
      subscriptionStatus: row.subscription_status as string,
      plan: planLimitsOf(row),
    };
  }

  async insert(
    key: {
      id: string;
      accountId: string;
      name: string | null;
      prefix: string;
      hash: Buffer;
      scopes: Scope[];
      expiresAt: Date | null;
    },
    manager: EntityManager = this.db.manager,
  ): Promise<ApiKeyRow> {
    const rows: ApiKeyRow[] = await manager.query(
      `INSERT INTO api_keys (id, account_id, name, prefix, key_hash, scopes, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${KEY_COLUMNS}`,
      [key.id, key.accountId, key.name, key.prefix, key.hash, key.scopes, key.expiresAt],
    );
    return rows[0];
  }

  async list(accountId: string, limit: number, startingAfter?: string): Promise<ApiKeyRow[]> {
    return this.db.query(
      `SELECT ${KEY_COLUMNS} FROM api_keys WHERE account_id = $1 AND ($2::text IS NULL OR id < $2)
        ORDER BY id DESC LIMIT $3`,
      [accountId, startingAfter ?? null, limit],
    );
  }

  async find(accountId: string, id: string, manager: EntityManager = this.db.manager): Promise<ApiKeyRow | null> {
    const rows: ApiKeyRow[] = await manager.query(
      `SELECT ${KEY_COLUMNS} FROM api_keys WHERE account_id = $1 AND id = $2 FOR UPDATE`,
      [accountId, id],
    );
    return rows[0] ?? null;
  }

  /**
   * Revokes now (grace 0) or schedules the revocation `graceSeconds` ahead (rotation with grace): the
   * key is then `revoked_api_key` from that moment, like any revoked key. An earlier revocation stands.
   */
  async retire(id: string, graceSeconds: number, manager: EntityManager = this.db.manager): Promise<ApiKeyRow> {
    const rows: [ApiKeyRow[], number] = await manager.query(
      `UPDATE api_keys SET revoked_at = LEAST(COALESCE(revoked_at, 'infinity'), now() + make_interval(secs => $2))
        WHERE id = $1 RETURNING ${KEY_COLUMNS}`,
      [id, graceSeconds],
    );
    return rows[0][0];
  }

  async touch(keyId: string): Promise<void> {
    await this.db.query('UPDATE api_keys SET last_used_at = now() WHERE id = $1', [keyId]);
  }
}
