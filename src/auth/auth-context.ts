// Who is calling and what they may reach: the scopes of API keys and the roles of dashboard members.
export const SCOPES = ['sdr2hdr', 'audio', 'account', 'keys', 'webhooks'] as const;
export type Scope = (typeof SCOPES)[number];

export const MEMBER_ROLES = ['owner', 'developer', 'viewer'] as const;
export type MemberRole = (typeof MEMBER_ROLES)[number];

export interface PlanLimits {
  id: string;
  requestsPerSecond: number;
  concurrentJobs: number;
  processingMinutesPerMonth: number | null;
  apis: string[];
  maxOutputHeight: number;
  usdPerCredit: number;
}

/** Who is calling: set on the request by the auth guard after a valid API key or dashboard session. */
export interface AuthContext {
  accountId: string;
  /** The API key's id; null for a signed-in member. */
  keyId: string | null;
  /** The API key's expiry (the latest expiry of a key it may create); null without one and for a member. */
  keyExpiresAt: Date | null;
  scopes: Scope[];
  plan: PlanLimits;
  accountStatus: 'active' | 'suspended';
  /** `active`, `payment_failed` or `inactive`; submits check it again inside their transaction. */
  subscriptionStatus: string;
  /** Present when a member signed in to the dashboard is calling (a session, not a key). */
  member?: SignedInMember;
}

export interface SignedInMember {
  id: string;
  email: string;
  role: MemberRole;
  sessionId: string;
}
