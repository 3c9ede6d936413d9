// All SQL of members and their one-time password links (invitations and resets).
import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { row, rows } from '../common/database/sql';
import type { MemberRole } from '../auth/auth-context';

export interface MemberRow {
  id: string;
  account_id: string;
  email: string;
  role: MemberRole;
  invited_at: Date;
  joined_at: Date | null;
  last_sign_in_at: Date | null;
  /** When the member's live invitation link expires (invited members only). */
  invitation_expires_at: Date | null;
}

/** A member as sign-in sees it: the password hash and the account they belong to. */
export interface SignInRow extends MemberRow {
  password_hash: string | null;
  account_name: string;
  account_plan: string;
  account_status: string;
}

export interface LinkRow {
  member_id: string;
  purpose: 'invite' | 'reset';
  expires_at: Date;
  email: string;
  role: MemberRole;
  account_name: string;
}

const MEMBER_COLUMNS = `m.id, m.account_id, m.email, m.role, m.invited_at, m.joined_at, m.last_sign_in_at,
  CASE WHEN m.joined_at IS NULL THEN (SELECT max(l.expires_at) FROM password_links l
    WHERE l.member_id = m.id AND l.purpose = 'invite' AND l.used_at IS NULL AND NOT l.requested) END AS invitation_expires_at`;
const ACCOUNT_COLUMNS = 'a.name AS account_name, a.plan_id AS account_plan, a.status AS account_status';

@Injectable()
export class MembersRepository {
  constructor(private readonly db: DataSource) {}

  transaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  /**
   * Null when the email already belongs to a member of this account. Another account's member may be
   * invited (the conflict is settled when they accept: members_joined_email_idx).
   */
  async insert(
    manager: EntityManager,
    member: { id: string; accountId: string; email: string; role: MemberRole },
  ): Promise<MemberRow | null> {
    const inserted = await row<{ id: string }>(
      manager,
      `INSERT INTO members (id, account_id, email, role) VALUES ($1, $2, $3, $4) ON CONFLICT (account_id, email) DO NOTHING RETURNING id`,
      [member.id, member.accountId, member.email, member.role],
    );
    return inserted ? this.find(member.accountId, inserted.id, manager) : null;
  }

  find(accountId: string, id: string, manager: EntityManager = this.db.manager): Promise<MemberRow | null> {
    return row<MemberRow>(manager, `SELECT ${MEMBER_COLUMNS} FROM members m WHERE m.account_id = $1 AND m.id = $2`, [
      accountId,
      id,
    ]);
  }

  list(accountId: string): Promise<MemberRow[]> {
    return rows<MemberRow>(this.db, `SELECT ${MEMBER_COLUMNS} FROM members m WHERE m.account_id = $1 ORDER BY m.id`, [
      accountId,
    ]);
  }

  /** The member who joined with this email, else its most recent invitation (an email may be invited by several accounts). */
  findForSignIn(email: string): Promise<SignInRow | null> {
    return row<SignInRow>(
      this.db,
      `SELECT ${MEMBER_COLUMNS}, m.password_hash, ${ACCOUNT_COLUMNS}
         FROM members m JOIN accounts a ON a.id = m.account_id WHERE m.email = $1
        ORDER BY m.joined_at IS NULL, m.invited_at DESC, m.id LIMIT 1`,
      [email],
    );
  }

  /** Whether someone with this email has joined an account other than `memberId`'s. */
  async joinedElsewhere(manager: EntityManager, memberId: string): Promise<boolean> {
    const found = await row(
      manager,
      `SELECT 1 FROM members other JOIN members m ON m.email = other.email
        WHERE m.id = $1 AND other.id <> m.id AND other.joined_at IS NOT NULL`,
      [memberId],
    );
    return found !== null;
  }

  findWithAccount(memberId: string, manager: EntityManager = this.db.manager): Promise<SignInRow | null> {
    return row<SignInRow>(
      manager,
      `SELECT ${MEMBER_COLUMNS}, m.password_hash, ${ACCOUNT_COLUMNS}
         FROM members m JOIN accounts a ON a.id = m.account_id WHERE m.id = $1`,
      [memberId],
    );
  }

  /** The account's owners, locked until the transaction ends: role changes and removals queue here. */
  async lockOwners(manager: EntityManager, accountId: string): Promise<string[]> {
    const owners = await rows<{ id: string }>(
      manager,
      `SELECT id FROM members WHERE account_id = $1 AND role = 'owner' ORDER BY id FOR UPDATE`,
      [accountId],
    );
    return owners.map((owner) => owner.id);
  }

  async setRole(manager: EntityManager, id: string, role: MemberRole): Promise<void> {
    await manager.query(`UPDATE members SET role = $2 WHERE id = $1`, [id, role]);
  }

  /** Removes the member; their sessions and links go with them (cascade). */
  async delete(manager: EntityManager, id: string): Promise<void> {
    await manager.query(`DELETE FROM members WHERE id = $1`, [id]);
  }

  async setPassword(manager: EntityManager, id: string, passwordHash: string): Promise<void> {
    await manager.query(
      `UPDATE members SET password_hash = $2, joined_at = COALESCE(joined_at, now()), last_sign_in_at = now() WHERE id = $1`,
      [id, passwordHash],
    );
  }

  async markSignedIn(id: string): Promise<void> {
    await this.db.query(`UPDATE members SET last_sign_in_at = now() WHERE id = $1`, [id]);
  }

  // ---- one-time links ----

  /**
   * A new link replaces every link the member still had: only the latest one works. A link `requested`
   * anonymously ("forgot password") replaces only earlier requested ones, never an invitation or a link an
   * owner or operator handed out.
   */
  async replaceLinks(
    manager: EntityManager,
    link: { tokenHash: Buffer; memberId: string; purpose: 'invite' | 'reset'; expiresAt: Date; requested?: boolean },
  ): Promise<void> {
    const requested = link.requested ?? false;
    await manager.query(`DELETE FROM password_links WHERE member_id = $1 AND (requested OR NOT $2)`, [
      link.memberId,
      requested,
    ]);
    await manager.query(
      `INSERT INTO password_links (token_hash, member_id, purpose, expires_at, requested) VALUES ($1, $2, $3, $4, $5)`,
      [link.tokenHash, link.memberId, link.purpose, link.expiresAt, requested],
    );
  }

  /** Once a password is set, every other link of the member stops working. */
  async dropLinks(manager: EntityManager, memberId: string): Promise<void> {
    await manager.query(`DELETE FROM password_links WHERE member_id = $1 AND used_at IS NULL`, [memberId]);
  }

  /** An unused, unexpired link with its member and account. */
  findLink(tokenHash: Buffer): Promise<LinkRow | null> {
    return row<LinkRow>(
      this.db,
      `SELECT l.member_id, l.purpose, l.expires_at, m.email, m.role, a.name AS account_name
         FROM password_links l JOIN members m ON m.id = l.member_id JOIN accounts a ON a.id = m.account_id
        WHERE l.token_hash = $1 AND l.used_at IS NULL AND l.expires_at > now()`,
      [tokenHash],
    );
  }

  /** Uses the link up (one time only, in the caller's transaction); null when it is unknown, used or expired. */
  consumeLink(manager: EntityManager, tokenHash: Buffer): Promise<{ member_id: string; purpose: string } | null> {
    return row<{ member_id: string; purpose: string }>(
      manager,
      `UPDATE password_links SET used_at = now() WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now()
       RETURNING member_id, purpose`,
      [tokenHash],
    );
  }
}
