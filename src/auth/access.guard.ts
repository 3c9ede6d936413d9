import { Inject, Injectable } from '@nestjs/common';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { ApiError } from '../common/errors';
import { MaintenanceService } from '../common/maintenance/maintenance.service';
import { RateLimiter, type RateLimitResult } from '../common/rate-limit/rate-limiter';
import { adminTokenError, isAdminToken, presentedAdminToken } from './admin-token';
import type { AuthContext } from './auth-context';
import type { Access } from './auth.decorators';
import { AuthService, type Authenticated } from './auth.service';
import { CredentialAttempts } from './credential-attempts';
import { CredentialsVersion } from './credentials-version';
import { notForCaller } from './roles';
import { SessionAuthenticator } from './session-authenticator';

/**
 * The checks every request to a Nest route passes before its handler: steps 1–3 of docs/api-decisions.md §2, run in
 * a Fastify onRequest hook (`register`, wired in http-app.ts) ahead of Nest's pipeline — before the
 * body is read, so a request without a valid credential, or over its rate, is refused without its
 * body ever being parsed — with each route's access declaration (auth.decorators.ts) carried to
 * Fastify as route config (route-access.ts; a route without one stops the start-up).
 * Where each step of that order lives (what wins when several things are wrong; pinned by
 * test/jobs/check-order.e2e-spec.ts):
 *
 * | §2 step                                   | where                                                        |
 * |-------------------------------------------|--------------------------------------------------------------|
 * | 1 before it: the IP's failed-credential   | here, before any key, operator token or session is verified: |
 * |   budget (429 for right and wrong alike)  | for a key looked up recently, read in the rate limiter's     |
 * |                                           | round trip as its gate (`attempts.budget`, then `enforce`);  |
 * |                                           | otherwise `attempts.check` (credential-attempts.ts); the     |
 * |                                           | queue board's own hook calls `check` too (admin/queue-board) |
 * | 1 authentication 401, authorisation 403   | here: `auth.cached` or `authenticate` (auth.service.ts),      |
 * |                                           | sessions (session-authenticator.ts), the operator token,     |
 * |                                           | scope, suspension; a refusal counts: `attempts.fail`         |
 * | 2 request rate (per account; per IP)      | here: `limiter.hit` (common/rate-limit/rate-limiter.ts), the |
 * |                                           | same round trip as step 1's budget and the credentials       |
 * |                                           | version for a key looked up recently                         |
 * | 3 maintenance                             | here: `checkMaintenance` (common/maintenance/)               |
 * | 3 region health                           | jobs/usecases/prepare-job.ts `checkRegion`: the region is    |
 * |                                           | named in the body, so it runs after steps 4–5 (a retried     |
 * |                                           | submit whose job exists gets its stored 202 even while the   |
 * |                                           | region is down)                                              |
 * | 4 request shape 400/413/415               | Fastify's body parsers (http-app.ts; they run after this     |
 * |                                           | hook, so a body that cannot be parsed is refused only for a  |
 * |                                           | caller steps 1–3 let through), the validation pipe           |
 * |                                           | (common/http/validation.ts: NotJsonBody's 415), and          |
 * |                                           | jobs/usecases/submit-request.ts `validate*`                  |
 * | 5 Idempotency-Key replay or conflict      | common/idempotency/idempotency.interceptor.ts                |
 * | 6 account state and plan                  | jobs/usecases/prepare-job.ts `checkPlan`,                    |
 * |                                           | `checkAccountState`                                          |
 * | 7 sources                                 | jobs/sources.service.ts (probe: media/probe.ts)              |
 * | 8 quota, concurrency, spend, balance,     | jobs/limits.ts, inside the submit's transaction              |
 * |   queue depth                             |                                                              |
 */
@Injectable()
export class AccessGuard {
  constructor(
    private readonly auth: AuthService,
    private readonly limiter: RateLimiter,
    private readonly maintenance: MaintenanceService,
    private readonly credentials: CredentialsVersion,
    private readonly sessions: SessionAuthenticator,
    private readonly attempts: CredentialAttempts,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Runs the checks of every Nest route in a Fastify onRequest hook, ahead of Nest's own pipeline and
   * before the body is read (docs/api-decisions.md §2 puts 401, 403 and 429 before a 400 about the body, and a
   * body nobody may send is not worth parsing); a refusal is answered by `send` (the error envelope). Each route's `access` comes from its declaration
   * (route-access.ts); routes Nest does not own (docs, dashboard files, the queue board) have none
   * and answer for themselves.
   */
  register(
    fastify: FastifyInstance,
    send: (error: unknown, request: FastifyRequest, reply: FastifyReply) => void,
  ): void {
    fastify.addHook('onRequest', (request, reply, done) => {
      const access = request.routeOptions.config.access;
      if (!access || access.kind === 'operational') return done();
      this.check(request, reply, access).then(
        () => done(),
        (error: unknown) => send(error, request, reply),
      );
    });
  }

  /** Steps 1–3 of docs/api-decisions.md §2 for a route reached with `access`; throws the refusal. */
  async check(request: FastifyRequest, reply: FastifyReply, access: Access): Promise<void> {
    switch (access.kind) {
      case 'operational':
        return;
      case 'admin':
        return this.checkAdmin(request);
      case 'public':
        // A player fetches a package's files in bursts (several viewers may share one NAT address): playback
        // is counted per address apart from the other routes without a key, so neither starves the other.
        this.enforce(
          access.limit === 'playback'
            ? await this.limiter.hit(`playback:${request.ip}`, this.config.playbackRateLimitPerSecond)
            : await this.limiter.hit(`ip:${request.ip}`, this.config.ipRateLimitPerSecond),
        );
        this.checkMaintenance();
        return;
      case 'api_key': {
        if (this.sessions.applies(request, access)) {
          await this.attempts.check(request.ip);
          return this.admitMember(request, reply, access);
        }
        const { caller, result } = await this.authenticateAndCount(request);
        this.authoriseKey(caller, access);
        this.admit(request, reply, caller, result);
        return;
      }
    }
  }

  /**
   * Step 1 again for a request admitted earlier and still being answered (an open event stream): its
   * credential judged by the same rules, now, without counting the request against any rate. Throws
   * the refusal it would get. A key costs no I/O while the credentials version stays `version` (read
   * once for all streams by the caller); a session costs one indexed read.
   */
  async recheck(request: FastifyRequest, access: Access, version: string): Promise<void> {
    if (access.kind !== 'api_key') return;
    if (this.sessions.applies(request, access)) {
      const caller = await this.sessions.authenticate(request, { touch: false });
      this.sessions.authorise(request, access, caller);
      return;
    }
    const { caller } = await this.auth.authenticate(request.headers['x-api-key'], version);
    this.authoriseKey(caller, access);
  }

  /** Step 1's authorisation for a key: a route for members only, the route's scopes, suspension (403). */
  private authoriseKey(caller: AuthContext, access: Extract<Access, { kind: 'api_key' }>): void {
    if (access.members) throw notForCaller(access.members, 'api_key');
    if (!access.scopes.some((scope) => caller.scopes.includes(scope))) {
      throw new ApiError('insufficient_scope', {
        message: `This API key lacks the "${access.scopes.join('" or "')}" scope. Use a key that has it.`,
      });
    }
    if (caller.accountStatus === 'suspended') throw new ApiError('account_suspended');
  }

  /**
   * The IP's failed-credential budget, the key, and the account's request count. A key this instance
   * looked up recently costs one Redis round trip for all three (the budget read first, and the count
   * not taken when it is spent) plus the credentials version, which says whether the cached lookup may
   * be trusted; otherwise the budget (and the version) is read first, then the key, then the count.
   */
  private async authenticateAndCount(
    request: FastifyRequest,
  ): Promise<{ caller: AuthContext; result: RateLimitResult }> {
    const cached = this.auth.cached(request.headers['x-api-key']);
    let authenticated: Authenticated;
    let result: RateLimitResult;
    if (cached) {
      const { accountId, plan } = cached.caller;
      try {
        result = await this.limiter.hit(accountId, plan.requestsPerSecond, {
          alsoRead: this.credentials.key,
          gate: this.attempts.budget(request.ip),
        });
      } catch (error) {
        this.attempts.checkWithoutRedis(request.ip, error);
        throw error;
      }
      this.attempts.enforce(request.ip, result.gate);
      authenticated = cached;
    } else {
      const version = await this.attempts.check(request.ip, this.credentials.key);
      authenticated = await this.authenticate(request, version);
      result = await this.limiter.hit(authenticated.caller.accountId, authenticated.caller.plan.requestsPerSecond, {
        alsoRead: this.credentials.key,
      });
    }
    if (result.observed !== authenticated.version) {
      // The cached lookup predates a change to keys or accounts: read it again before trusting it.
      authenticated = await this.authenticate(request, result.observed);
      result = { ...result, ...RateLimiter.judge(result.count, authenticated.caller.plan.requestsPerSecond) };
    }
    return { caller: authenticated.caller, result };
  }

  /** A dashboard session instead of a key: the same steps, the member's role in place of scopes. */
  private async admitMember(
    request: FastifyRequest,
    reply: FastifyReply,
    access: Extract<Access, { kind: 'api_key' }>,
  ): Promise<void> {
    let caller: AuthContext;
    try {
      caller = await this.sessions.authenticate(request);
    } catch (error) {
      await this.countFailure(request, error);
      throw error;
    }
    this.sessions.authorise(request, access, caller);
    this.admit(request, reply, caller, await this.limiter.hit(caller.accountId, caller.plan.requestsPerSecond));
  }

  /** Steps 2 and 3 for an authenticated caller: the account's rate (with its headers), then maintenance. */
  private admit(request: FastifyRequest, reply: FastifyReply, caller: AuthContext, result: RateLimitResult): void {
    request.auth = caller;
    reply.header('X-RateLimit-Limit', String(result.limit));
    reply.header('X-RateLimit-Remaining', String(result.remaining));
    reply.header('X-RateLimit-Reset', String(result.resetSeconds));
    this.enforce(result);
    this.checkMaintenance();
  }

  /** The caller of an X-API-Key; a refused key counts against the caller's IP (key guessing). */
  private async authenticate(request: FastifyRequest, currentVersion?: string): Promise<Authenticated> {
    try {
      return await this.auth.authenticate(request.headers['x-api-key'], currentVersion);
    } catch (error) {
      await this.countFailure(request, error);
      throw error;
    }
  }

  private enforce(result: RateLimitResult): void {
    if (!result.exceeded) return;
    throw new ApiError('rate_limit_exceeded', {
      details: {
        limit: result.limit,
        window_seconds: RateLimiter.WINDOW_SECONDS,
        retry_after_seconds: result.resetSeconds,
      },
    });
  }

  /** A refused credential (an auth envelope, not an outage) spends the IP's failed-credential budget. */
  private async countFailure(request: FastifyRequest, authError: unknown): Promise<void> {
    if (authError instanceof ApiError && authError.status === 401) await this.attempts.fail(request.ip);
  }

  private checkMaintenance(): void {
    const state = this.maintenance.current();
    if (!state.enabled) return;
    const retryAfterSeconds = state.until
      ? Math.max(1, Math.ceil((Date.parse(state.until) - Date.now()) / 1000))
      : undefined;
    throw new ApiError('maintenance_window', {
      retryAfterSeconds,
      details: state.until ? { until: state.until } : undefined,
    });
  }

  private async checkAdmin(request: FastifyRequest): Promise<void> {
    // Counted before it is compared, given back when right: see CredentialAttempts.reserve.
    const attempt = await this.attempts.reserve(request.ip);
    const token = presentedAdminToken(request.headers);
    if (token === undefined) throw adminTokenError(false);
    if (!isAdminToken(this.config.adminToken, token)) throw adminTokenError(true);
    await attempt.refund();
  }
}
