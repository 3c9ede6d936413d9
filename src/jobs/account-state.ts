// Step 6 of a submit (docs/api-decisions.md §2): the account's subscription must be paid up. Checked on
// the caller's credential before the sources are probed, and again on the account's locked row in the
// job's transaction (job-admission.ts), where a change made since is seen.
import { ApiError } from '../common/errors';

/** The refusal an account in this subscription state gets, or null when it may submit. */
export function accountStateRefusal(subscriptionStatus: string): ApiError | null {
  if (subscriptionStatus === 'inactive') return new ApiError('subscription_inactive');
  if (subscriptionStatus === 'payment_failed') return new ApiError('payment_failed');
  return null;
}
