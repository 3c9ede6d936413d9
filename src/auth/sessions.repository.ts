// All SQL of dashboard sessions. A session row holds the SHA-256 of the cookie's token, never the
// token; its CSRF token is a random value stored with it (useless without the cookie).
import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { row, rows } from '../common/database/sql';
import type { MemberRole, PlanLimits } from './auth-context';
import { PLAN_COLUMNS, planLimitsOf } from './plan-limits';

/** A live session with who it belongs to: one indexed read per dashboard request. */
export interface ActiveSession {
  id: string;
  csrfToken: string;
  expiresAt: Date;
  lastSeenAt: Date;
  member: { id: string; email: string; role: MemberRole };
  accountId: string;
  accountStatus: 'active' | 'suspended';
  subscriptionStatus: string;
  plan: PlanLimits;
}

@Injectable()
export class SessionsRepository {
  constructor(private readonly db: DataSource) {}

  async insert(
    session: { id: string; memberId: string; tokenHash: Buffer; csrfToken: string; expiresAt: Date },
    manager: EntityManager = this.db.manager,
  ): Promise<void> {
    await manager.query(
      `INSERT INTO member_sessions (id, member_id, token_hash, csrf_token, expires_at) VALUES ($1, $2, $3, $4, $5)`,
      [session.id, session.memberId, session.tokenHash, session.csrfToken, session.expiresAt],
    );
  }

  /** The session of a token if it is neither revoked, nor idle for `idleSeconds`, nor past its expiry. */
  async findActive(tokenHash: Buffer, idleSeconds: number): Promise<ActiveSession | null> {
    const found = await row<Record<string, unknown>>(
      this.db,
      `SELECT s.id, s.csrf_token, s.expires_at, s.last_seen_at, m.id AS member_id, m.email, m.role, a.id AS account_id,
              a.status, a.subscription_status, ${PLAN_COLUMNS}
         FROM member_sessions s JOIN members m ON m.id = s.member_id JOIN accounts a ON a.id = m.account_id
         JOIN plans p ON p.id = a.plan_id
        WHERE s.token_hash = $1 AND s.revoked_at IS NULL AND s.expires_at > now()
          AND s.last_seen_at > now() - make_interval(secs => $2)`,
      [tokenHash, idleSeconds],
      { prepared: 'session_find_active' },
    );
    if (!found) return null;
    return {
      id: found.id as string,
      csrfToken: found.csrf_token as string,
      expiresAt: found.expires_at as Date,
      lastSeenAt: found.last_seen_at as Date,
      member: { id: found.member_id as string, email: found.email as string, role: found.role as MemberRole },
      accountId: found.account_id as string,
      accountStatus: found.status as 'active' | 'suspended',
      subscriptionStatus: found.subscription_status as string,
      plan: planLimitsOf(found),
    };
  }

  async findById(id: string): Promise<{ csrf_token: string; expires_at: Date } | null> {
    return row<{ csrf_token: string; expires_at: Date }>(
      this.db,
      `SELECT csrf_token, expires_at FROM member_sessions WHERE id = $1`,
      [id],
    );
  }

  /** Idle expiry counts from here. */
  async touch(id: string): Promise<void> {
    await this.db.query(`UPDATE member_sessions SET last_seen_at = now() WHERE id = $1 AND revoked_at IS NULL`, [id]);
  }

  async revokeByTokenHash(tokenHash: Buffer, manager: EntityManager = this.db.manager): Promise<void> {
    await manager.query(`UPDATE member_sessions SET revoked_at = now() WHERE token_hash = $1 AND revoked_at IS NULL`, [
      tokenHash,
    ]);
  }

  async revoke(id: string): Promise<void> {
    await this.db.query(`UPDATE member_sessions SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL`, [id]);
  }

  /** Every live session of the member: "sign out everywhere", a password change, a removal. */
  async revokeAllOfMember(memberId: string, manager: EntityManager = this.db.manager): Promise<number> {
    const revoked = await rows<{ id: string }>(
      manager,
      `UPDATE member_sessions SET revoked_at = now() WHERE member_id = $1 AND revoked_at IS NULL RETURNING id`,
      [memberId],
    );
    return revoked.length;
  }

  /** Ended sessions are kept only until the member's next sign-in. */
  async purgeEnded(memberId: string, idleSeconds: number, manager: EntityManager = this.db.manager): Promise<void> {
    await manager.query(
      `DELETE FROM member_sessions WHERE member_id = $1
          AND (revoked_at IS NOT NULL OR expires_at <= now() OR last_seen_at <= now() - make_interval(secs => $2))`,
      [memberId, idleSeconds],
    );
  }
}
