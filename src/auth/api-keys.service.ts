import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { ApiError } from '../common/errors';
import { newId } from '../common/ids';
import { toList, type ListResponse } from '../common/pagination';
import { generateApiKey, isRevoked } from './api-key';
import type { AuthContext, Scope } from './auth-context';
import { CredentialsVersion } from './credentials-version';
import { ApiKeysRepository, type ApiKeyRow } from './api-keys.repository';

export interface ApiKeyView {
  object: 'api_key';
  id: string;
  /** What the account calls the key; null when it was given none. */
  name: string | null;
  prefix: string;
  scopes: Scope[];
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
  created_at: string;
  /** The full key: present only in the response that created it. */
  key?: string;
}

/** Who asks for a new key: its scopes and expiry bound the key's (null: the account itself, e.g. an operator). */
export type KeyIssuer = Pick<AuthContext, 'scopes' | 'keyExpiresAt'>;

/**
 * A key may create, rotate or revoke only keys within its own powers: scopes among its own, an expiry
 * no later than its own (so a short-lived `keys` key can neither mint a permanent all-scope key nor
 * take one away from its owner).
 */
function checkWithinIssuer(
  issuer: KeyIssuer,
  scopes: Scope[],
  expiresAt: Date | null,
  action: 'create' | 'rotate' | 'revoke',
): void {
  const beyond = scopes.filter((scope) => !issuer.scopes.includes(scope));
  if (beyond.length > 0) {
    throw new ApiError('insufficient_scope', {
      param: 'scopes',
      message: `Your API key cannot ${action} a key with the "${beyond.join('", "')}" scope: a key may only manage keys whose scopes it has itself.`,
    });
  }
  const limit = issuer.keyExpiresAt;
  if (limit && (expiresAt === null || expiresAt.getTime() > limit.getTime())) {
    throw new ApiError('insufficient_scope', {
      param: 'expires_at',
      message: `Your API key expires at ${limit.toISOString()}; it cannot ${action} a key that outlives it (${expiresAt ? `expires_at ${expiresAt.toISOString()}` : 'no expiry'}).`,
    });
  }
}

const iso = (date: Date | null): string | null => (date ? date.toISOString() : null);

function toView(row: ApiKeyRow, key?: string): ApiKeyView {
  const view: ApiKeyView = {
    object: 'api_key',
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    scopes: row.scopes,
    expires_at: iso(row.expires_at),
    revoked_at: iso(row.revoked_at),
    last_used_at: iso(row.last_used_at),
    created_at: row.created_at.toISOString(),
  };
  if (key) view.key = key;
  return view;
}

@Injectable()
export class ApiKeysService {
  constructor(
    private readonly keys: ApiKeysRepository,
    private readonly db: DataSource,
    private readonly credentials: CredentialsVersion,
  ) {}

  async create(
    accountId: string,
    scopes: Scope[],
    expiresAt: Date | null,
    issuer: KeyIssuer | null,
    manager?: EntityManager,
    name: string | null = null,
  ): Promise<ApiKeyView> {
    if (expiresAt && expiresAt.getTime() <= Date.now()) {
      throw new ApiError('invalid_parameter', { param: 'expires_at', message: 'expires_at must be in the future.' });
    }
    if (issuer) checkWithinIssuer(issuer, scopes, expiresAt, 'create');
    const generated = generateApiKey();
    const row = await this.keys.insert(
      {
        id: newId('key'),
        accountId,
        name,
        prefix: generated.prefix,
        hash: generated.hash,
        scopes: [...new Set(scopes)],
        expiresAt,
      },
      manager,
    );
    return toView(row, generated.key);
  }

  async list(accountId: string, limit = 20, startingAfter?: string): Promise<ListResponse<ApiKeyView>> {
    const rows = await this.keys.list(accountId, limit + 1, startingAfter);
    return toList(
      rows.map((row) => toView(row)),
      limit,
      (view) => view.id,
    );
  }

  async revoke(caller: AuthContext, id: string): Promise<ApiKeyView> {
    const view = await this.db.transaction(async (manager) => {
      const existing = await this.requireKey(caller.accountId, id, manager);
      checkWithinIssuer(caller, existing.scopes, existing.expires_at, 'revoke');
      return toView(isRevoked(existing.revoked_at) ? existing : await this.keys.retire(id, 0, manager));
    });
    // Also when it was revoked already: a retry after a failed announcement must announce it.
    await this.credentials.changed();
    return view;
  }

  /**
   * A new key with the same scopes, the same expiry and the same name (unless `name` gives another); the old one is revoked now, or after
   * `graceSeconds`. A dead key (revoked or expired) is refused rather than replaced: a rotation
   * renews the secret, never the key's lifetime, so an expired key stays dead.
   */
  async rotate(caller: AuthContext, id: string, graceSeconds: number, name?: string): Promise<ApiKeyView> {
    const accountId = caller.accountId;
    const view = await this.db.transaction(async (manager) => {
      const existing = await this.requireKey(accountId, id, manager);
      const expiresAt = existing.expires_at;
      // Checked before the old key is retired: a refused rotation changes nothing.
      checkWithinIssuer(caller, existing.scopes, expiresAt, 'rotate');
      if (isRevoked(existing.revoked_at)) {
        throw new ApiError('invalid_parameter', {
          param: 'id',
          message: 'This key is already revoked; create a new key instead.',
        });
      }
      if (expiresAt && expiresAt.getTime() <= Date.now()) {
        throw new ApiError('invalid_parameter', {
          param: 'id',
          message: `This key expired at ${expiresAt.toISOString()} and stays dead; create a new key instead.`,
        });
      }
      await this.keys.retire(id, graceSeconds, manager);
      return this.create(accountId, existing.scopes, expiresAt, null, manager, name ?? existing.name);
    });
    await this.credentials.changed();
    return view;
  }

  private async requireKey(accountId: string, id: string, manager: EntityManager): Promise<ApiKeyRow> {
    const row = await this.keys.find(accountId, id, manager);
    // Another account's key answers exactly like a missing one.
    if (!row)
      throw new ApiError('resource_missing', {
        param: 'id',
        message: 'No API key with this id exists for your account.',
      });
    return row;
  }
}
