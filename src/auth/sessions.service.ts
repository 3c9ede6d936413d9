import { Inject, Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { newId } from '../common/ids';
import {
  clearedSessionCookie,
  generateToken,
  hashToken,
  isWellFormedToken,
  readSessionCookie,
  secureCookies,
  sessionCookie,
} from './session-token';
import { SessionsRepository } from './sessions.repository';

export interface StartedSession {
  id: string;
  /** The Set-Cookie header value that hands the token to the browser. */
  cookie: string;
  csrfToken: string;
  expiresAt: Date;
}

/** Starts and ends dashboard sessions; the session authenticator checks them on each request. */
@Injectable()
export class SessionsService {
  constructor(
    private readonly sessions: SessionsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * A brand-new session for a member who just proved who they are. The session the browser came
   * with (if any) is revoked, so a token planted before sign-in is never promoted (fixation).
   */
  async start(memberId: string, previousToken: string | null, manager?: EntityManager): Promise<StartedSession> {
    if (previousToken && isWellFormedToken(previousToken))
      await this.sessions.revokeByTokenHash(hashToken(previousToken), manager);
    await this.sessions.purgeEnded(memberId, this.config.sessionIdleTimeoutSeconds, manager);
    const { token, hash } = generateToken();
    const id = newId('ses');
    const csrfToken = randomBytes(32).toString('base64url');
    const expiresAt = new Date(Date.now() + this.config.sessionAbsoluteTimeoutSeconds * 1000);
    await this.sessions.insert({ id, memberId, tokenHash: hash, csrfToken, expiresAt }, manager);
    return {
      id,
      cookie: sessionCookie(token, {
        maxAgeSeconds: this.config.sessionAbsoluteTimeoutSeconds,
        secure: this.secureCookies(),
      }),
      csrfToken,
      expiresAt,
    };
  }

  /** The CSRF token and absolute expiry of the caller's session (the dashboard reads them after a reload). */
  async describe(sessionId: string): Promise<Pick<StartedSession, 'csrfToken' | 'expiresAt'>> {
    const found = await this.sessions.findById(sessionId);
    if (!found) throw new Error(`session ${sessionId} vanished`);
    return { csrfToken: found.csrf_token, expiresAt: found.expires_at };
  }

  get idleTimeoutSeconds(): number {
    return this.config.sessionIdleTimeoutSeconds;
  }

  end(sessionId: string): Promise<void> {
    return this.sessions.revoke(sessionId);
  }

  endAllOfMember(memberId: string, manager?: EntityManager): Promise<number> {
    return this.sessions.revokeAllOfMember(memberId, manager);
  }

  clearedCookie(): string {
    return clearedSessionCookie(this.secureCookies());
  }

  /**
   * The session token a signing-in browser came with (revoked by `start`); null without one, and with
   * two (a planted one beside it): signing in is how such a browser gets a single cookie again.
   */
  presentedToken(cookieHeader: string | undefined): string | null {
    try {
      return readSessionCookie(cookieHeader, this.secureCookies());
    } catch {
      return null;
    }
  }

  private secureCookies(): boolean {
    return secureCookies(this.config);
  }
}
