export const SCOPES = ['sdr2hdr', 'audio', 'account', 'keys', 'webhooks'] as const;
export type Scope = (typeof SCOPES)[number];

export interface PlanLimits {
  id: string;
  requestsPerSecond: number;
  concurrentJobs: number;
  processingMinutesPerMonth: number | null;
  apis: string[];
  maxOutputHeight: number;
  usdPerCredit: number;
}

/** Who is calling: set on the request by the auth guard after a valid API key. */
export interface AuthContext {
  accountId: string;
  keyId: string;
  scopes: Scope[];
  plan: PlanLimits;
  accountStatus: 'active' | 'suspended';
  /** `active`, `payment_failed` or `inactive`; submits check it again inside their transaction. */
  subscriptionStatus: string;
}
