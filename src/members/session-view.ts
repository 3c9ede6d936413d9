import type { StartedSession } from '../auth/sessions.service';
import type { SignInRow } from './members.repository';
import { toMemberView, type MemberView } from './members.service';

/** What the dashboard needs to start: who signed in, to which account, and the session's CSRF token. */
export interface SessionView {
  object: 'session';
  member: MemberView;
  account: { object: 'account'; id: string; name: string; plan: string; status: string };
  /** Send it as X-CSRF-Token with every request that changes something. */
  csrf_token: string;
  /** The absolute expiry; the session also ends after `idle_timeout_seconds` without a request. */
  expires_at: string;
  idle_timeout_seconds: number;
}

export function toSessionView(
  member: SignInRow,
  session: Pick<StartedSession, 'csrfToken' | 'expiresAt'>,
  idleTimeoutSeconds: number,
): SessionView {
  return {
    object: 'session',
    member: toMemberView(member),
    account: {
      object: 'account',
      id: member.account_id,
      name: member.account_name,
      plan: member.account_plan,
      status: member.account_status,
    },
    csrf_token: session.csrfToken,
    expires_at: session.expiresAt.toISOString(),
    idle_timeout_seconds: idleTimeoutSeconds,
  };
}
