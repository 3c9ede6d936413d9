import { HTTP_CODE_METADATA } from '@nestjs/common/constants';
import {
  Inject,
  Injectable,
  Logger,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
import { catchError, from, lastValueFrom, mergeMap, type Observable } from 'rxjs';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { ApiError, toErrorObject } from '../errors/api-error';
import { CATALOGUE } from '../errors/catalogue';
import { requestHash } from './canonical-hash';
import { IdempotencyRepository, type ClaimStamp } from './idempotency.repository';
import { hashingTap, hashWhole, STREAM_CLAIM_HASH, streamRequestHash, type HashingTap } from './stream-body';
import { IdempotencyKeyConflict, STORES_OWN_RESPONSE } from './idempotent-response';

/** Thrown to answer with a stored response; the global filter writes it. */
export class IdempotentReplay {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly headers: Record<string, string>,
  ) {}
}

// Shape errors are not stored (docs/api-decisions.md §1): the client fixes the body and may reuse the key.
const VALIDATION_CODES = new Set([
  'missing_parameter',
  'invalid_parameter',
  'invalid_json',
  'request_too_large',
  'unsupported_content_type',
]);
const REPLAYED_HEADERS = ['location'];

/**
 * Idempotency-Key on every authenticated POST (docs/api-decisions.md §1): the first request claims the key, its
 * outcome is stored for 24 h and replayed for the same body; a different body is
 * idempotency_conflict, a request still running is resource_locked. 5xx, retryable errors and
 * validation failures are not stored, so a retry really runs again. A handler marked
 * `@StoresOwnIdempotentResponse()` (a job submit) stores its success in its work's transaction.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  private readonly logger = new Logger(IdempotencyInterceptor.name);

  constructor(
    private readonly store: IdempotencyRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const reply = context.switchToHttp().getResponse<FastifyReply>();
    const header = request.headers['idempotency-key'];
    const auth = request.auth;
    if (request.method !== 'POST' || header === undefined || !auth) return next.handle();
    const key = Array.isArray(header) ? header[0] : header;
    if (key.length === 0 || key.length > 255) {
      throw new ApiError('invalid_parameter', {
        param: 'Idempotency-Key',
        message: 'Idempotency-Key must be 1 to 255 characters.',
      });
    }
    const successStatus = (Reflect.getMetadata(HTTP_CODE_METADATA, context.getHandler()) as number | undefined) ?? 201;
    if (isStream(request.body)) return this.interceptStream(request, reply, auth.accountId, key, successStatus, next);
    const hash = requestHash(request.method, request.url.split('?')[0], request.body);
    const storesOwnResponse = Reflect.getMetadata(STORES_OWN_RESPONSE, context.getHandler()) === true;

    return from(this.around(request, reply, auth.accountId, key, hash, successStatus, storesOwnResponse, next));
  }

  /**
   * The claim, the handler, and what its outcome leaves stored, as one promise: Nest's pipeline
   * already runs the handler through rxjs, and three more operators per POST measured as a visible
   * share of a submit's CPU (bench/profile-submits.ts).
   */
  private async around(
    request: FastifyRequest,
    reply: FastifyReply,
    accountId: string,
    key: string,
    hash: string,
    successStatus: number,
    storesOwnResponse: boolean,
    next: CallHandler,
  ): Promise<unknown> {
    const claimed = await this.begin(accountId, key, hash);
    request.idempotency = { accountId, key, requestHash: hash };
    let body: unknown;
    try {
      body = await lastValueFrom(next.handle());
    } catch (error) {
      await this.afterFailure(error, request, accountId, key, claimed);
      throw error;
    }
    // Stored by the handler in its work's transaction (see idempotent-response.ts).
    if (storesOwnResponse) return body;
    const headers: Record<string, string> = {};
    for (const name of REPLAYED_HEADERS) {
      const value = reply.getHeader(name);
      if (typeof value === 'string') headers[name] = value;
    }
    // The work is done (a job created, credits held): its answer reaches the client even if the
    // copy cannot be stored now. A 5xx here would release the key and make the retry do it twice;
    // unstored, the key stays claimed (resource_locked) until it counts as abandoned.
    await this.store.complete(accountId, key, successStatus, body, headers).catch((failure: unknown) => {
      this.logger.warn(
        { request_id: request.id, account_id: accountId, err: failure },
        'idempotent response not stored; the key stays claimed until it counts as abandoned',
      );
    });
    return body;
  }

  /** A claimed request failed: its refusal is stored, or the key released so that a retry runs again. */
  private async afterFailure(
    error: unknown,
    request: FastifyRequest,
    accountId: string,
    key: string,
    claimed: ClaimStamp,
  ): Promise<void> {
    if (error instanceof IdempotentReplay || isOwnConflict(error)) return;
    const row = error instanceof ApiError ? CATALOGUE[error.code] : null;
    if (error instanceof ApiError && row && row.status < 500 && !row.retryable && !VALIDATION_CODES.has(error.code)) {
      const body = {
        error: toErrorObject(error.code, { requestId: String(request.id), docsUrl: this.config.docsUrl }, error),
      };
      await this.store.complete(accountId, key, error.status, body, {}).catch((failure: unknown) =>
        // Unstored, the key stays claimed until it counts as abandoned; the retry then runs again
        // and meets the same refusal.
        this.logger.warn({ request_id: request.id, err: failure }, 'idempotent error not stored'),
      );
    } else {
      // Retried by the store until it succeeds (the client meanwhile hears resource_locked, retryable).
      await this.store.release(accountId, key, claimed);
    }
  }

  /**
   * A streamed body (an upload): claimed before it is read, hashed on its way to the handler, stored
   * with that hash. Any failure releases the key (the body's hash may be unknown then), so a retry runs
   * again; only a success is replayed.
   */
  private interceptStream(
    request: FastifyRequest,
    reply: FastifyReply,
    accountId: string,
    key: string,
    successStatus: number,
    next: CallHandler,
  ): Observable<unknown> {
    const path = request.url.split('?')[0];
    const contentType = request.headers['content-type'] ?? '';
    const query = { ...((request.query ?? {}) as Record<string, unknown>) };
    return from(this.beginStream(accountId, key, request.body as Readable, path, contentType, query)).pipe(
      mergeMap(({ tap, stamp }) => {
        request.body = tap.stream;
        return next.handle().pipe(
          mergeMap(async (body: unknown) => {
            const headers: Record<string, string> = {};
            for (const name of REPLAYED_HEADERS) {
              const value = reply.getHeader(name);
              if (typeof value === 'string') headers[name] = value;
            }
            const hash = streamRequestHash(path, contentType, tap.digest(), query);
            await this.store.complete(accountId, key, successStatus, body, headers, hash).catch((failure: unknown) => {
              this.logger.warn(
                { request_id: request.id, account_id: accountId, err: failure },
                'idempotent response not stored; the key stays claimed until it counts as abandoned',
              );
            });
            return body;
          }),
          catchError(async (error: unknown) => {
            await this.store.release(accountId, key, stamp);
            throw error;
          }),
        );
      }),
    );
  }

  private async beginStream(
    accountId: string,
    key: string,
    body: Readable,
    path: string,
    contentType: string,
    query: Record<string, unknown>,
  ): Promise<{ tap: HashingTap; stamp: ClaimStamp }> {
    let stamp = await this.store.claim(accountId, key, STREAM_CLAIM_HASH);
    if (stamp !== null) return { tap: hashingTap(body), stamp };
    const existing = await this.store.find(accountId, key);
    if (!existing && (stamp = await this.store.claim(accountId, key, STREAM_CLAIM_HASH)) !== null) {
      return { tap: hashingTap(body), stamp };
    }
    if (!existing || existing.state === 'in_flight') {
      body.resume(); // drain, so the connection can answer
      throw new IdempotencyKeyConflict('resource_locked');
    }
    // Stored: this request's own bytes and query decide between the stored answer and a conflict.
    const sha256 = await hashWhole(body, this.config.maxUploadBytes);
    if (sha256 === null || streamRequestHash(path, contentType, sha256, query) !== existing.request_hash) {
      throw new IdempotencyKeyConflict('idempotency_conflict');
    }
    throw new IdempotentReplay(
      existing.response_status ?? 200,
      existing.response_body,
      existing.response_headers ?? {},
    );
  }

  /** The claim's stamp when this request claimed the key; otherwise throws the conflict or the replay. */
  private async begin(accountId: string, key: string, hash: string): Promise<ClaimStamp> {
    const stamp = await this.store.claim(accountId, key, hash);
    if (stamp !== null) return stamp;
    const existing = await this.store.find(accountId, key);
    // Expired between the two statements: treat as a fresh claim attempt once more.
    if (!existing) {
      const again = await this.store.claim(accountId, key, hash);
      if (again !== null) return again;
      throw new IdempotencyKeyConflict('resource_locked');
    }
    if (existing.request_hash !== hash) throw new IdempotencyKeyConflict('idempotency_conflict');
    if (existing.state === 'in_flight') throw new IdempotencyKeyConflict('resource_locked');
    throw new IdempotentReplay(
      existing.response_status ?? 200,
      existing.response_body,
      existing.response_headers ?? {},
    );
  }
}

function isOwnConflict(error: unknown): boolean {
  return error instanceof IdempotencyKeyConflict;
}

function isStream(body: unknown): boolean {
  return typeof (body as { pipe?: unknown } | null)?.pipe === 'function';
}
