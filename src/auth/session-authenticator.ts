// The dashboard's credential: a session cookie, accepted by the access guard beside X-API-Key and
// turned into the same AuthContext a key gives, with the member's role mapped to scopes.
import { Inject, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { ApiError } from '../common/errors';
import type { AuthContext } from './auth-context';
import type { Access } from './auth.decorators';
import { mayChange, notForCaller, READ_METHODS, scopesOf, viewerRefusal } from './roles';
import { checkCrossSite } from './same-origin';
import { clearedSessionCookie, hashToken, isWellFormedToken, readSessionCookie, secureCookies } from './session-token';
import { SessionsRepository, type ActiveSession } from './sessions.repository';

type KeyAccess = Extract<Access, { kind: 'api_key' }>;

/** last_seen_at is written at most this often (and at least four times per idle period). */
const TOUCH_INTERVAL_MS = 60_000;

@Injectable()
export class SessionAuthenticator {
  private readonly publicOrigin: string;
  private readonly secure: boolean;
  private readonly touchIntervalMs: number;

  constructor(
    private readonly sessions: SessionsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.publicOrigin = new URL(config.publicBaseUrl).origin;
    this.secure = secureCookies(config);
    this.touchIntervalMs = Math.min(TOUCH_INTERVAL_MS, (config.sessionIdleTimeoutSeconds * 1000) / 4);
  }

  /**
   * Whether the guard should judge this request by its session: it carries the session cookie and
   * no API key (an explicit key wins over an ambient cookie), or the route is for members only.
   */
  applies(request: FastifyRequest, access: KeyAccess): boolean {
    if (request.headers['x-api-key'] !== undefined) return false;
    return access.members !== undefined || readSessionCookie(request.headers.cookie, this.secure) !== null;
  }

  /**
   * Step 1 of docs/api-decisions.md §2 for a session: a live session (401 invalid_session), and for any change,
   * the request's origin and the session's CSRF token (403 csrf_check_failed).
   */
  async authenticate(request: FastifyRequest, options: { touch?: boolean } = {}): Promise<AuthContext> {
    const token = readSessionCookie(request.headers.cookie, this.secure);
    if (token === null) {
      throw new ApiError('invalid_session', {
        param: 'Cookie',
        message: 'Sign in to the dashboard first: this route takes a signed-in member, not an API key.',
      });
    }
    const session = isWellFormedToken(token)
      ? await this.sessions.findActive(hashToken(token), this.config.sessionIdleTimeoutSeconds)
      : null;
    if (!session) {
      throw new ApiError('invalid_session', {
        param: 'Cookie',
        headers: { 'Set-Cookie': clearedSessionCookie(this.secure) },
      });
    }
    if (!READ_METHODS.has(request.method)) this.checkCrossSite(request, session);
    // A re-check of an open stream (`touch: false`) is no activity of the member's: it must not keep an idle session alive.
    if (options.touch !== false && Date.now() - session.lastSeenAt.getTime() > this.touchIntervalMs) {
      // Not awaited, and its failure dropped on purpose: the request must neither wait for nor fail on
      // a last-seen write, and a lost one only makes the idle expiry come up to a minute earlier.
      this.sessions.touch(session.id).catch(() => undefined);
    }
    return {
      accountId: session.accountId,
      keyId: null,
      // A member is no key: their role (scopesOf, mayChange) bounds the keys they may create.
      keyExpiresAt: null,
      scopes: scopesOf(session.member.role),
      plan: session.plan,
      accountStatus: session.accountStatus,
      subscriptionStatus: session.subscriptionStatus,
      member: { ...session.member, sessionId: session.id },
    };
  }

  /**
   * Step 1's authorisation for a member (403): the route's roles, a viewer's reads-only rule, the
   * account's suspension. A member's own session (reading it, signing out) is exempt from the last two.
   */
  authorise(request: FastifyRequest, access: KeyAccess, caller: AuthContext): void {
    const role = caller.member!.role;
    if (access.members && !access.members.includes(role)) throw notForCaller(access.members, role);
    if (access.ownSession) return;
    if (!READ_METHODS.has(request.method) && !mayChange(role)) throw viewerRefusal();
    if (caller.accountStatus === 'suspended') throw new ApiError('account_suspended');
  }

  /** A change must come from the dashboard's own origin and carry the session's CSRF token. */
  private checkCrossSite(request: FastifyRequest, session: ActiveSession): void {
    checkCrossSite(request, {
      origin: this.publicOrigin,
      csrfToken: session.csrfToken,
      header: 'X-CSRF-Token',
      page: 'the dashboard',
    });
  }
}
