// The values an operator may give an account's plan, status and subscription status: one list for the
// admin API's validation (dto/admin.dto.ts) and the command line (admin-commands.ts), in a module of its own
// so the command line can check a line without loading the API's DTOs and their decorators.
export const PLAN_IDS = ['free', 'starter', 'pro', 'enterprise'] as const;
export const ACCOUNT_STATUSES = ['active', 'suspended'] as const;
export const SUBSCRIPTION_STATUSES = ['active', 'payment_failed', 'inactive'] as const;
