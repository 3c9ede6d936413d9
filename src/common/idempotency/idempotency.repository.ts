import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import type { Pool } from 'pg';
import type { Transaction } from '../database/pg-transaction';
import { rows } from '../database/sql';
import { createAsyncCommitPool } from '../database/async-commit-pool';
import { namedStatementsAllowed } from '../database/pool-mode';
import { APP_CONFIG, type AppConfig } from '../config/config';

export interface StoredResponse {
  request_hash: string;
  state: 'in_flight' | 'done';
  response_status: number | null;
  response_body: unknown;
  response_headers: Record<string, string> | null;
}

/** A request still "in flight" after this long was abandoned (its process died): a retry may take over. */
const ABANDONED_AFTER_SECONDS = 60;
/** Pauses between attempts of a release that failed (a pool exhausted, the database or PgBouncer away). */
const RELEASE_RETRY_MS = { first: 250, max: 4000 };

/**
 * Names one claim of a key (its created_at in microseconds, as text): a release removes that claim
 * and never a later one, so a release retried late cannot free a key another request has claimed since.
 */
export type ClaimStamp = string;

/**
 * Idempotency records are committed asynchronously (see createAsyncCommitPool): a submit would
 * otherwise wait for two WAL flushes (claim, job) instead of one. A job submit's response is not
 * stored here but in the job's own transaction (`completeInTransaction`), so a job never exists
 * without its stored 202; the job's synchronous commit makes the claim before it durable too. Other
 * requests' responses can be lost by a Postgres crash within ~200 ms, or by an API process dying
 * before storing them: the key is then reclaimable after 60 s.
 */
@Injectable()
export class IdempotencyRepository implements OnApplicationShutdown {
  private readonly logger = new Logger(IdempotencyRepository.name);
  private readonly db: Pool;
  /** Releases being retried, each with its wake-up timer: shutdown ends them. */
  private readonly retrying = new Map<Promise<void>, () => void>();
  private closing = false;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.db = createAsyncCommitPool(config);
  }

  async onApplicationShutdown(): Promise<void> {
    this.closing = true;
    for (const wake of this.retrying.values()) wake();
    await Promise.all(this.retrying.keys());
    await this.db.end();
  }

  /**
   * Claims the key for this request. Exactly one of several concurrent identical requests wins
   * (the primary key decides); an expired or abandoned claim is taken over. Null when not claimed.
   */
  async claim(accountId: string, key: string, hash: string): Promise<ClaimStamp | null> {
    const { rows } = await this.db.query<{ stamp: string }>({
      // Parsed once per connection, unless the connection is pooled per transaction (pool-mode.ts).
      name: namedStatementsAllowed(this.db) ? 'idempotency-claim' : undefined,
      text: `INSERT INTO idempotency_keys (account_id, key, request_hash, state, expires_at)
       VALUES ($1, $2, $3, 'in_flight', now() + interval '24 hours')
       ON CONFLICT (account_id, key) DO UPDATE
         SET request_hash = EXCLUDED.request_hash, state = 'in_flight', created_at = now(), expires_at = EXCLUDED.expires_at,
             response_status = NULL, response_body = NULL, response_headers = NULL
         WHERE idempotency_keys.expires_at < now()
            OR (idempotency_keys.state = 'in_flight' AND idempotency_keys.request_hash = EXCLUDED.request_hash
                AND idempotency_keys.created_at < now() - make_interval(secs => $4))
       RETURNING (extract(epoch FROM created_at) * 1000000)::bigint::text AS stamp`,
      values: [accountId, key, hash, ABANDONED_AFTER_SECONDS],
    });
    return rows[0]?.stamp ?? null;
  }

  async find(accountId: string, key: string): Promise<StoredResponse | null> {
    const { rows } = await this.db.query<StoredResponse>(
      `SELECT request_hash, state, response_status, response_body, response_headers FROM idempotency_keys
        WHERE account_id = $1 AND key = $2 AND expires_at > now()`,
      [accountId, key],
    );
    return rows[0] ?? null;
  }

  async complete(
    accountId: string,
    key: string,
    status: number,
    body: unknown,
    headers: Record<string, string>,
    /** The request's hash, when it was not known at the claim (a streamed body: stream-body.ts). */
    requestHash?: string,
  ): Promise<void> {
    await this.db.query(
      `UPDATE idempotency_keys SET state = 'done', response_status = $3, response_body = $4, response_headers = $5,
              request_hash = COALESCE($6, request_hash)
        WHERE account_id = $1 AND key = $2`,
      [accountId, key, status, JSON.stringify(body), headers, requestHash ?? null],
    );
  }

  /**
   * Frees the key of a request that did not complete, so the client's retry runs again. A release must
   * not be lost to a moment without a database connection (a pool exhausted in a submit storm behind
   * PgBouncer, PgBouncer restarting): the key would answer 409 resource_locked to every retry until the
   * claim counts as abandoned. So a failed release is retried in the background, with backoff, until it
   * succeeds or the claim would count as abandoned anyway. Resolves after the first attempt, true if it
   * freed the key then (the caller's error answer does not wait for the retries).
   */
  async release(accountId: string, key: string, stamp: ClaimStamp): Promise<boolean> {
    const first = await this.releaseOnce(accountId, key, stamp).then(
      () => null,
      (failure: unknown) => failure,
    );
    if (first === null) return true;
    this.logger.warn({ account_id: accountId, err: first }, 'idempotency key not released yet; retrying');
    const giveUpAt = Date.now() + ABANDONED_AFTER_SECONDS * 1000;
    let wake = (): void => undefined;
    const retry = (async () => {
      for (let pause = RELEASE_RETRY_MS.first; !this.closing; pause = Math.min(pause * 2, RELEASE_RETRY_MS.max)) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, pause);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        if (this.closing) break;
        try {
          await this.releaseOnce(accountId, key, stamp);
          this.logger.log({ account_id: accountId }, 'idempotency key released after retrying');
          return;
        } catch (failure) {
          if (Date.now() >= giveUpAt) {
            // The claim counts as abandoned now: the client's next retry takes it over (claim()).
            this.logger.warn({ account_id: accountId, err: failure }, 'idempotency key not released');
            return;
          }
        }
      }
    })();
    this.retrying.set(retry, () => wake());
    void retry.finally(() => this.retrying.delete(retry));
    return false;
  }

  private async releaseOnce(accountId: string, key: string, stamp: ClaimStamp): Promise<void> {
    await this.db.query(
      `DELETE FROM idempotency_keys
        WHERE account_id = $1 AND key = $2 AND state = 'in_flight'
          AND (extract(epoch FROM created_at) * 1000000)::bigint = $3::bigint`,
      [accountId, key, stamp],
    );
  }
}

/**
 * Stores the responses of requests that claimed their keys, inside the caller's transaction
 * (synchronous commit, with the work), in one statement for all of them. Answers how many were
 * stored: a claim no longer in flight (taken over by a retry) is not.
 */
export async function completeInTransaction(
  manager: Transaction,
  completions: {
    claim: { accountId: string; key: string; requestHash: string };
    response: { status: number; body: unknown; headers: Record<string, string> };
  }[],
): Promise<number> {
  const stored = await rows(
    manager,
    `UPDATE idempotency_keys
        SET state = 'done', response_status = done.status, response_body = done.body, response_headers = done.headers
       FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::jsonb[], $6::jsonb[])
         AS done(account_id, key, request_hash, status, body, headers)
      WHERE idempotency_keys.account_id = done.account_id AND idempotency_keys.key = done.key
        AND idempotency_keys.request_hash = done.request_hash AND idempotency_keys.state = 'in_flight'
      RETURNING 1 AS stored`,
    [
      completions.map(({ claim }) => claim.accountId),
      completions.map(({ claim }) => claim.key),
      completions.map(({ claim }) => claim.requestHash),
      completions.map(({ response }) => response.status),
      completions.map(({ response }) => JSON.stringify(response.body)),
      completions.map(({ response }) => JSON.stringify(response.headers)),
    ],
    { prepared: 'idempotency-complete' },
  );
  return stored.length;
}
