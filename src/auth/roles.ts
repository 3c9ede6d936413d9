// What a dashboard member may do. A signed-in member acts through the same routes as an API key;
// the role decides which: owners everything, developers every API-key scope, viewers reads only.
import { ApiError } from '../common/errors';
import { SCOPES, type MemberRole, type Scope } from './auth-context';

/** Every role reaches every scope; a viewer is then held to reads (see `mayChange`). */
export function scopesOf(_role: MemberRole): Scope[] {
  return [...SCOPES];
}

/** Methods that never change anything, the only ones a viewer may use. */
export const READ_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD']);

export function mayChange(role: MemberRole): boolean {
  return role !== 'viewer';
}

/** The refusal of a route kept for some members (`allowed`) to a caller who is not one of them. */
export function notForCaller(allowed: readonly MemberRole[], caller: MemberRole | 'api_key'): ApiError {
  const who = allowed.length === 1 ? `an account ${allowed[0]}` : `a member (${allowed.join(', ')})`;
  const message =
    caller === 'api_key'
      ? `Only ${who} signed in to the dashboard can do this; API keys cannot.`
      : `Only ${who} can do this; your role is ${caller}. Ask an owner of the account.`;
  return new ApiError('insufficient_scope', { message });
}

export function viewerRefusal(): ApiError {
  return new ApiError('insufficient_scope', {
    message: 'Your role (viewer) can read but not change anything. Ask an owner of the account for the developer role.',
  });
}
