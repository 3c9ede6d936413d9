// For a handler whose work and answer must commit together (a job submit: the job, its credit hold
// and its stored 202). Stored in the work's own transaction, an answer cannot be lost between the
// commit and a later write — an API process that died there used to leave the key reclaimable, and
// the client's retry then created a second job.
import { SetMetadata } from '@nestjs/common';
import type { Transaction } from '../database/pg-transaction';
import { ApiError } from '../errors/api-error';
import { completeInTransaction } from './idempotency.repository';

/** The Idempotency-Key a request claimed (the interceptor puts it on the request). */
export interface IdempotencyClaim {
  accountId: string;
  key: string;
  requestHash: string;
}

export const STORES_OWN_RESPONSE = 'mediajobs:idempotency:stores-own-response';

/**
 * Marks a handler that stores its success response itself, with `storeIdempotentResponses` inside the
 * transaction of its work; the interceptor then stores only its refusals.
 */
export const StoresOwnIdempotentResponse = (): MethodDecorator => SetMetadata(STORES_OWN_RESPONSE, true);

/** The interceptor's own 409s; never stored, and they never release the key (another request holds it). */
export class IdempotencyKeyConflict extends ApiError {
  constructor(code: 'idempotency_conflict' | 'resource_locked') {
    super(code, {
      param: 'Idempotency-Key',
      message:
        code === 'resource_locked'
          ? 'A request with this Idempotency-Key is still being processed. Retry shortly.'
          : 'This Idempotency-Key was already used with a different request body. Use a new key for a new request.',
      retryAfterSeconds: code === 'resource_locked' ? 1 : undefined,
    });
  }
}

/** A success response to store for the request that claimed `claim`. */
export interface IdempotentResponse {
  claim: IdempotencyClaim;
  response: { status: number; body: unknown; headers: Record<string, string> };
}

/**
 * Stores the success responses of the claims' requests in the caller's transaction. When a claim is no
 * longer its request's (taken over as abandoned by a retry that finished first), it throws
 * resource_locked so the caller's transaction — its jobs and holds — rolls back: one key, one job.
 */
export async function storeIdempotentResponses(manager: Transaction, responses: IdempotentResponse[]): Promise<void> {
  if (!responses.length) return;
  if ((await completeInTransaction(manager, responses)) !== responses.length)
    throw new IdempotencyKeyConflict('resource_locked');
}
