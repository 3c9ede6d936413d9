import { Inject, Injectable, Logger } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { MemberRole } from '../auth/auth-context';
import { generateToken, hashToken, isWellFormedToken } from '../auth/session-token';
import { SessionsService } from '../auth/sessions.service';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { ApiError } from '../common/errors';
import { newId } from '../common/ids';
import { Mailer } from '../common/mail/mailer';
import { toList, type ListResponse } from '../common/pagination';
import { invitationMail, resetMail } from './member-mail';
import { MembersRepository, type MemberRow } from './members.repository';
import { hashPassword, passwordProblem } from './password';

/** Invitation and reset links work once, for this long. */
export const LINK_TTL_SECONDS = 24 * 3600;

export interface MemberView {
  object: 'member';
  id: string;
  email: string;
  role: MemberRole;
  /** `invited` until the person follows the invitation and chooses a password. */
  status: 'invited' | 'active';
  invited_at: string;
  joined_at: string | null;
  last_sign_in_at: string | null;
  /** When the current invitation link stops working (invited members only). */
  invitation_expires_at: string | null;
}

/** A member just invited: the one-time link is shown here once (and mailed when SMTP is set up). */
export type InvitedMemberView = MemberView & { invite_url: string };

export interface PasswordLinkView {
  object: 'password_link';
  purpose: 'invite' | 'reset';
  email: string;
  account_name: string;
  role: MemberRole;
  expires_at: string;
}

const iso = (date: Date | null): string | null => (date ? date.toISOString() : null);

export function toMemberView(row: MemberRow): MemberView {
  return {
    object: 'member',
    id: row.id,
    email: row.email,
    role: row.role,
    status: row.joined_at ? 'active' : 'invited',
    invited_at: row.invited_at.toISOString(),
    joined_at: iso(row.joined_at),
    last_sign_in_at: iso(row.last_sign_in_at),
    invitation_expires_at: iso(row.invitation_expires_at),
  };
}

export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** Members of an account: invitations, roles, removal, and the one-time links that set a password. */
@Injectable()
export class MembersService {
  private readonly logger = new Logger(MembersService.name);

  constructor(
    private readonly members: MembersRepository,
    private readonly sessions: SessionsService,
    private readonly mailer: Mailer,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async list(accountId: string): Promise<ListResponse<MemberView>> {
    const found = await this.members.list(accountId);
    return toList(found.map(toMemberView), found.length, (view) => view.id);
  }

  /** An owner invites someone: an invited member and a one-time link, mailed and returned once. */
  async invite(accountId: string, email: string, role: MemberRole): Promise<InvitedMemberView> {
    const invited = await this.members.transaction((manager) => this.createInvitation(manager, accountId, email, role));
    this.mailInvitation(invited);
    return invited;
  }

  /**
   * The invitation inside the caller's transaction (the admin API creates an account and its
   * owner together); the caller mails it with `mailInvitation` after its commit.
   */
  async createInvitation(
    manager: EntityManager,
    accountId: string,
    email: string,
    role: MemberRole,
  ): Promise<InvitedMemberView> {
    const address = normaliseEmail(email);
    const member = await this.members.insert(manager, { id: newId('mem'), accountId, email: address, role });
    if (!member) {
      // Only this account's own members are refused here. Another account's member is invited like anyone
      // (saying so would tell this owner who uses mediajobs elsewhere); redeemLink refuses them on accepting.
      throw new ApiError('invalid_parameter', {
        param: 'email',
        message: 'This email already belongs to a member of your account.',
      });
    }
    const url = await this.issueLink(manager, member.id, 'invite');
    const refreshed = (await this.members.find(accountId, member.id, manager))!;
    return { ...toMemberView(refreshed), invite_url: url };
  }

  mailInvitation(invited: InvitedMemberView, accountName?: string): void {
    void this.accountNameOf(invited.id, accountName).then((name) =>
      this.mailer.sendLater(
        invitationMail(invited.email, {
          accountName: name,
          role: invited.role,
          url: invited.invite_url,
          expiresAt: new Date(invited.invitation_expires_at!),
        }),
      ),
    );
  }

  /** A fresh invitation link for someone who has not joined yet (the old link stops working). */
  async resendInvitation(accountId: string, id: string): Promise<InvitedMemberView> {
    const invited = await this.members.transaction(async (manager) => {
      const member = await this.requireMember(accountId, id, manager);
      if (member.joined_at) {
        throw new ApiError('invalid_parameter', {
          param: 'id',
          message: 'This member has already joined; they can reset their password from the sign-in page.',
        });
      }
      const url = await this.issueLink(manager, member.id, 'invite');
      return { ...toMemberView((await this.members.find(accountId, id, manager))!), invite_url: url };
    });
    this.mailInvitation(invited);
    return invited;
  }

  async changeRole(accountId: string, id: string, role: MemberRole): Promise<MemberView> {
    return this.members.transaction(async (manager) => {
      const owners = await this.members.lockOwners(manager, accountId);
      const member = await this.requireMember(accountId, id, manager);
      if (member.role === 'owner' && role !== 'owner' && owners.length === 1) throw lastOwner('role');
      await this.members.setRole(manager, id, role);
      return toMemberView((await this.members.find(accountId, id, manager))!);
    });
  }

  /** Removes a member (or withdraws an invitation); their sessions end at once. */
  async remove(accountId: string, id: string): Promise<MemberView & { deleted: true }> {
    return this.members.transaction(async (manager) => {
      const owners = await this.members.lockOwners(manager, accountId);
      const member = await this.requireMember(accountId, id, manager);
      if (member.role === 'owner' && owners.length === 1) throw lastOwner('id');
      await this.members.delete(manager, id);
      return { ...toMemberView(member), deleted: true as const };
    });
  }

  /**
   * "Forgot password": a reset link is mailed when the email belongs to a member. Runs after the
   * answer has gone out, so the answer and its timing are the same whether it does or not.
   */
  requestReset(email: string): void {
    void this.mailReset(normaliseEmail(email)).catch((error: unknown) =>
      this.logger.warn({ err: error instanceof Error ? { message: error.message } : String(error) }, 'reset failed'),
    );
  }

  /** An operator's way to a member's set-password link (no SMTP, or an owner locked out). */
  async operatorLink(
    email: string,
  ): Promise<{ object: 'password_link_url'; email: string; url: string; expires_at: string }> {
    const member = await this.members.findForSignIn(normaliseEmail(email));
    if (!member) throw new ApiError('resource_missing', { param: 'email', message: 'No member has this email.' });
    const purpose = member.joined_at ? 'reset' : 'invite';
    const url = await this.members.transaction((manager) => this.issueLink(manager, member.id, purpose));
    const expiresAt = new Date(Date.now() + LINK_TTL_SECONDS * 1000);
    return { object: 'password_link_url', email: member.email, url, expires_at: expiresAt.toISOString() };
  }

  /** What a link is for, so the set-password page can say it; 400 when it is unknown, used or expired. */
  async inspectLink(token: string): Promise<PasswordLinkView> {
    const link = isWellFormedToken(token) ? await this.members.findLink(hashToken(token)) : null;
    if (!link) throw deadLink();
    return {
      object: 'password_link',
      purpose: link.purpose,
      email: link.email,
      account_name: link.account_name,
      role: link.role,
      expires_at: link.expires_at.toISOString(),
    };
  }

  /**
   * Sets the password with a one-time link and ends every session the member had (a reset is
   * what someone does when they fear their account is known to another). Returns the member id;
   * the caller then starts a new session in the same transaction.
   */
  async redeemLink(manager: EntityManager, token: string, password: string): Promise<string> {
    const link = isWellFormedToken(token) ? await this.members.findLink(hashToken(token)) : null;
    if (!link) throw deadLink();
    const problem = passwordProblem(password, link.email);
    if (problem) throw new ApiError('invalid_parameter', { param: 'password', message: problem });
    const passwordHash = await hashPassword(password);
    const used = await this.members.consumeLink(manager, hashToken(token));
    if (!used) throw deadLink();
    // One person, one account (sign-in needs no account picker): an invitation of someone who joined
    // another account meanwhile cannot be accepted. Told here, to the holder of the link, not to the inviter.
    if (await this.members.joinedElsewhere(manager, used.member_id)) throw memberElsewhere();
    try {
      await this.members.setPassword(manager, used.member_id, passwordHash);
    } catch (error) {
      // Two invitations of one email accepted at once: members_joined_email_idx lets one through.
      if ((error as { code?: string }).code === '23505') throw memberElsewhere();
      throw error;
    }
    await this.members.dropLinks(manager, used.member_id);
    await this.sessions.endAllOfMember(used.member_id, manager);
    return used.member_id;
  }

  private async mailReset(email: string): Promise<void> {
    const member = await this.members.findForSignIn(email);
    if (!member) return;
    // An invited member who asks gets a fresh invitation link instead (the same page sets the password).
    // Anyone may ask for anyone: the new link joins the ones an owner or operator handed out, never replaces them.
    const purpose = member.joined_at ? 'reset' : 'invite';
    const url = await this.members.transaction((manager) =>
      this.issueLink(manager, member.id, purpose, { requested: true }),
    );
    const expiresAt = new Date(Date.now() + LINK_TTL_SECONDS * 1000);
    this.mailer.sendLater(
      purpose === 'reset'
        ? resetMail(member.email, { url, expiresAt })
        : invitationMail(member.email, { accountName: member.account_name, role: member.role, url, expiresAt }),
    );
  }

  private async issueLink(
    manager: EntityManager,
    memberId: string,
    purpose: 'invite' | 'reset',
    options: { requested?: boolean } = {},
  ): Promise<string> {
    const { token, hash } = generateToken();
    const expiresAt = new Date(Date.now() + LINK_TTL_SECONDS * 1000);
    await this.members.replaceLinks(manager, { tokenHash: hash, memberId, purpose, expiresAt, ...options });
    // The token travels in the fragment: browsers never send it to a server or in a Referer.
    return `${this.config.publicBaseUrl}/dashboard/set-password#token=${token}`;
  }

  private async accountNameOf(memberId: string, known?: string): Promise<string> {
    if (known) return known;
    return (await this.members.findWithAccount(memberId))?.account_name ?? 'mediajobs';
  }

  private async requireMember(accountId: string, id: string, manager: EntityManager): Promise<MemberRow> {
    const member = await this.members.find(accountId, id, manager);
    // Another account's member answers exactly like a missing one.
    if (!member)
      throw new ApiError('resource_missing', { param: 'id', message: 'No member with this id in your account.' });
    return member;
  }
}

function lastOwner(param: string): ApiError {
  return new ApiError('invalid_parameter', {
    param,
    message: 'An account keeps at least one owner: make another member owner first.',
  });
}

function memberElsewhere(): ApiError {
  return new ApiError('invalid_parameter', {
    param: 'token',
    message:
      'This email is already a member of another mediajobs account, and one email belongs to one account. Sign in there, or ask for an invitation to another address.',
  });
}

function deadLink(): ApiError {
  return new ApiError('invalid_parameter', {
    param: 'token',
    message: 'This link has expired or was already used. Ask for a new one from the sign-in page.',
  });
}
