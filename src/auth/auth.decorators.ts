import { SetMetadata, createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { MEMBER_ROLES, type AuthContext, type MemberRole, type Scope } from './auth-context';

/**
 * How a route is reached: `api_key` (the default) needs a key with the route's scope, or a dashboard
 * session (its member's role stands for the scopes); with `members`, only a session of a member with
 * one of those roles (a key is not a person); `ownSession` routes act on the caller's own session
 * (signing out), which every member may do, suspended account or not; `public` needs no key and is
 * limited per IP (IP_RATE_LIMIT; with `limit: 'playback'`, PLAYBACK_RATE_LIMIT, a count of its own);
 * `admin` needs X-Admin-Token; `operational` (health, metrics, docs) is exempt from rate limits and
 * maintenance.
 */
export type Access =
  | { kind: 'api_key'; scopes: Scope[]; members?: MemberRole[]; ownSession?: true }
  | { kind: 'public'; limit?: 'playback' }
  | { kind: 'admin' }
  | { kind: 'operational' };
export const ACCESS = 'mediajobs:access';

/** A key with any one of `scopes` may call the route. */
export const RequireScope = (...scopes: Scope[]) => SetMetadata(ACCESS, { kind: 'api_key', scopes } satisfies Access);
/** Only a signed-in member with one of `roles`; API keys are refused. */
export const MembersOnly = (...roles: MemberRole[]) =>
  SetMetadata(ACCESS, { kind: 'api_key', scopes: ['account'], members: roles } satisfies Access);
/** The signed-in member's own session (read it, end it): any member; API keys are refused. */
export const OwnSession = () =>
  SetMetadata(ACCESS, {
    kind: 'api_key',
    scopes: ['account'],
    members: [...MEMBER_ROLES],
    ownSession: true,
  } satisfies Access);
export const Public = () => SetMetadata(ACCESS, { kind: 'public' } satisfies Access);
/** A package's playlists and segments: no key (the token in the path is the credential), a per-IP limit of its own. */
export const PlaybackAccess = () => SetMetadata(ACCESS, { kind: 'public', limit: 'playback' } satisfies Access);
export const AdminOnly = () => SetMetadata(ACCESS, { kind: 'admin' } satisfies Access);
export const Operational = () => SetMetadata(ACCESS, { kind: 'operational' } satisfies Access);

/** The authenticated caller of an `api_key` route (a key, or a signed-in member). */
export const Caller = createParamDecorator((_data: unknown, ctx: ExecutionContext): AuthContext => {
  const auth = ctx.switchToHttp().getRequest<FastifyRequest>().auth;
  if (!auth) throw new Error('Caller used on a route without API key access');
  return auth;
});
