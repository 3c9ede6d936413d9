import { Injectable } from '@nestjs/common';
import { ApiError } from '../common/errors';
import { API_KEY_PATTERN, hashApiKey, isRevoked } from './api-key';
import type { AuthContext } from './auth-context';
import { ApiKeysRepository } from './api-keys.repository';

const TOUCH_INTERVAL_MS = 60_000;

@Injectable()
export class AuthService {
  constructor(private readonly keys: ApiKeysRepository) {}

  /**
   * Resolves an X-API-Key value to its caller, or throws the auth code that fits (spec §5).
   * No cache: a revoked key is refused by every instance on its very next request.
   */
  async authenticate(header: string | string[] | undefined): Promise<AuthContext> {
    if (header === undefined || header === '') throw new ApiError('missing_api_key', { param: 'X-API-Key' });
    const value = Array.isArray(header) ? header[0] : header;
    if (!API_KEY_PATTERN.test(value)) throw new ApiError('invalid_api_key', { param: 'X-API-Key' });
    const key = await this.keys.findByHash(hashApiKey(value));
    if (!key) throw new ApiError('invalid_api_key', { param: 'X-API-Key' });
    if (isRevoked(key.revokedAt)) throw new ApiError('revoked_api_key', { param: 'X-API-Key' });
    if (key.expiresAt && key.expiresAt.getTime() <= Date.now())
      throw new ApiError('expired_api_key', { param: 'X-API-Key' });
    if (!key.lastUsedAt || Date.now() - key.lastUsedAt.getTime() > TOUCH_INTERVAL_MS) {
      // Best effort and off the request path: last_used_at is informational.
      this.keys.touch(key.keyId).catch(() => undefined);
    }
    return {
      accountId: key.accountId,
      keyId: key.keyId,
      scopes: key.scopes,
      plan: key.plan,
      accountStatus: key.accountStatus,
    };
  }
}
