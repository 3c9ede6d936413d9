import { Injectable } from '@nestjs/common';
import { ApiError } from '../common/errors';
import { API_KEY_PATTERN, hashApiKey, isRevoked } from './api-key';
import type { AuthContext } from './auth-context';
import { ApiKeysRepository, type KeyWithAccount } from './api-keys.repository';

const TOUCH_INTERVAL_MS = 60_000;
/** A backstop only: entries are normally dropped as soon as the credentials version moves. */
const CACHE_MAX_AGE_MS = 10_000;
const CACHE_MAX_ENTRIES = 10_000;
/** Never equal to a version read from Redis, so the first request after start-up always re-reads. */
const UNKNOWN_VERSION = '\0unknown';

export interface Authenticated {
  caller: AuthContext;
  /** The credentials version the lookup is known to be current for. */
  version: string;
}

interface CachedKey {
  key: KeyWithAccount;
  version: string;
  loadedAt: number;
}

/**
 * Resolves X-API-Key values to callers. Lookups are cached per instance and tagged with the
 * credentials version seen before the read; the guard compares the tag with the version its
 * rate-limit round trip returns and calls `authenticate` again with that version when they differ,
 * which re-reads Postgres. So a revoked key is refused on its very next request (as without a
 * cache), while a busy key costs no query per request.
 */
@Injectable()
export class AuthService {
  private readonly cache = new Map<string, CachedKey>();
  private lastSeenVersion = UNKNOWN_VERSION;

  constructor(private readonly keys: ApiKeysRepository) {}

  /**
   * The caller of a cached lookup that is still valid by this instance's clock (not revoked, not
   * expired, not too old), without any I/O; undefined otherwise (then `authenticate`). The guard still
   * compares its `version` with the current one before trusting it.
   */
  cached(header: string | string[] | undefined): Authenticated | undefined {
    if (header === undefined || header === '') return undefined;
    const value = Array.isArray(header) ? header[0] : header;
    if (!API_KEY_PATTERN.test(value)) return undefined;
    const entry = this.cache.get(hashApiKey(value).toString('base64'));
    if (!entry || Date.now() - entry.loadedAt >= CACHE_MAX_AGE_MS) return undefined;
    if (isRevoked(entry.key.revokedAt) || (entry.key.expiresAt && entry.key.expiresAt.getTime() <= Date.now()))
      return undefined;
    return this.admit(entry);
  }

  /**
   * The caller for a key, or the auth code that fits (docs/spec/specification.txt §5). With `currentVersion`, only a
   * lookup made at that version is trusted; without it, the latest cached one.
   */
  async authenticate(header: string | string[] | undefined, currentVersion?: string): Promise<Authenticated> {
    if (header === undefined || header === '') throw new ApiError('missing_api_key', { param: 'X-API-Key' });
    const value = Array.isArray(header) ? header[0] : header;
    if (!API_KEY_PATTERN.test(value)) throw new ApiError('invalid_api_key', { param: 'X-API-Key' });
    if (currentVersion !== undefined) this.lastSeenVersion = currentVersion;
    const hash = hashApiKey(value);
    const cacheKey = hash.toString('base64');
    let entry = this.cache.get(cacheKey);
    const usable =
      entry &&
      Date.now() - entry.loadedAt < CACHE_MAX_AGE_MS &&
      (currentVersion === undefined || entry.version === currentVersion);
    if (!usable) {
      // Tag with the version known *before* the read: a change committed after it moves the version.
      const version = this.lastSeenVersion;
      const key = await this.keys.findByHash(hash);
      this.cache.delete(cacheKey);
      if (!key) throw new ApiError('invalid_api_key', { param: 'X-API-Key' });
      entry = { key, version, loadedAt: Date.now() };
      this.remember(cacheKey, entry);
    }
    const { key } = entry!;
    if (isRevoked(key.revokedAt)) throw new ApiError('revoked_api_key', { param: 'X-API-Key' });
    if (key.expiresAt && key.expiresAt.getTime() <= Date.now())
      throw new ApiError('expired_api_key', { param: 'X-API-Key' });
    return this.admit(entry!);
  }

  /** The caller of a valid lookup; records the key's use now and then. */
  private admit({ key, version }: CachedKey): Authenticated {
    if (!key.lastUsedAt || Date.now() - key.lastUsedAt.getTime() > TOUCH_INTERVAL_MS) {
      // Best effort and off the request path: last_used_at is informational, and a database too busy
      // or down to record it fails the request's own work anyway; the next use records it again.
      key.lastUsedAt = new Date();
      this.keys.touch(key.keyId).catch(() => (key.lastUsedAt = null));
    }
    return {
      caller: {
        accountId: key.accountId,
        keyId: key.keyId,
        keyExpiresAt: key.expiresAt,
        scopes: key.scopes,
        plan: key.plan,
        accountStatus: key.accountStatus,
        subscriptionStatus: key.subscriptionStatus,
      },
      version,
    };
  }

  private remember(cacheKey: string, entry: CachedKey): void {
    if (this.cache.size >= CACHE_MAX_ENTRIES) {
      // Maps iterate in insertion order: drop the oldest lookup.
      const oldest = this.cache.keys().next().value;
      if (oldest !== undefined) this.cache.delete(oldest);
    }
    this.cache.set(cacheKey, entry);
  }
}
