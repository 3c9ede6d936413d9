import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import type { Pool } from 'pg';
import type { Transaction } from '../database/pg-transaction';
import { row } from '../database/sql';
import { createAsyncCommitPool } from '../database/async-commit-pool';
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
  private readonly db: Pool;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.db = createAsyncCommitPool(config);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.db.end();
  }

  /**
   * Claims the key for this request. Exactly one of several concurrent identical requests wins
   * (the primary key decides); an expired or abandoned claim is taken over.
   */
  async claim(accountId: string, key: string, hash: string): Promise<boolean> {
    const { rows } = await this.db.query(
      `INSERT INTO idempotency_keys (account_id, key, request_hash, state, expires_at)
       VALUES ($1, $2, $3, 'in_flight', now() + interval '24 hours')
       ON CONFLICT (account_id, key) DO UPDATE
         SET request_hash = EXCLUDED.request_hash, state = 'in_flight', created_at = now(), expires_at = EXCLUDED.expires_at,
             response_status = NULL, response_body = NULL, response_headers = NULL
         WHERE idempotency_keys.expires_at < now()
            OR (idempotency_keys.state = 'in_flight' AND idempotency_keys.request_hash = EXCLUDED.request_hash
                AND idempotency_keys.created_at < now() - make_interval(secs => $4))
       RETURNING true AS claimed`,
      [accountId, key, hash, ABANDONED_AFTER_SECONDS],
    );
    return rows.length > 0;
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

  async release(accountId: string, key: string): Promise<void> {
    await this.db.query(`DELETE FROM idempotency_keys WHERE account_id = $1 AND key = $2 AND state = 'in_flight'`, [
      accountId,
      key,
    ]);
  }
}

/**
 * Stores the response of a request that claimed `key` with `requestHash`, inside the caller's
 * transaction (synchronous commit, with the work). False when the claim is not in flight any more.
 */
export async function completeInTransaction(
  manager: Transaction,
  claim: { accountId: string; key: string; requestHash: string },
  response: { status: number; body: unknown; headers: Record<string, string> },
): Promise<boolean> {
  const stored = await row(
    manager,
    `UPDATE idempotency_keys SET state = 'done', response_status = $4, response_body = $5, response_headers = $6
      WHERE account_id = $1 AND key = $2 AND request_hash = $3 AND state = 'in_flight'
      RETURNING 1 AS stored`,
    [claim.accountId, claim.key, claim.requestHash, response.status, JSON.stringify(response.body), response.headers],
  );
  return stored !== null;
}
