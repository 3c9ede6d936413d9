// What every resource method returns: a promise of the parsed body that can also give the HTTP
// response (`withResponse()`), and, for lists, an async iterable over every item of every page.

import type { ListResponse } from './types.js';

/** Rate-limit headers of an authenticated response (docs/api-decisions.md §1); null when absent. */
export interface RateLimitInfo {
  /** X-RateLimit-Limit: requests allowed per window. */
  limit: number | null;
  /** X-RateLimit-Remaining: requests left in the current window. */
  remaining: number | null;
  /** X-RateLimit-Reset: seconds until the window resets. */
  resetSeconds: number | null;
}

/** The HTTP side of a successful call. */
export interface ResponseInfo {
  status: number;
  headers: Headers;
  /** X-Request-Id (req_…): quote it to support. */
  requestId: string | null;
  rateLimit: RateLimitInfo;
  /** True when the service answered with the stored response of an earlier request with this Idempotency-Key. */
  idempotentReplayed: boolean;
  /** Retries made after the first request before this response arrived. */
  retries: number;
}

export interface WithResponse<T> {
  data: T;
  response: ResponseInfo;
}

export function responseInfo(response: Response, retries: number): ResponseInfo {
  const number = (name: string): number | null => {
    const value = response.headers.get(name);
    return value === null || value.trim() === '' || !Number.isFinite(Number(value)) ? null : Number(value);
  };
  return {
    status: response.status,
    headers: response.headers,
    requestId: response.headers.get('x-request-id'),
    rateLimit: {
      limit: number('x-ratelimit-limit'),
      remaining: number('x-ratelimit-remaining'),
      resetSeconds: number('x-ratelimit-reset'),
    },
    idempotentReplayed: response.headers.get('idempotent-replayed') === 'true',
    retries,
  };
}

/**
 * A call in flight. Await it for the body, as with any promise; `withResponse()` gives the body and
 * the response's status, headers, request id and rate-limit headers. The request is sent at once.
 */
export class ApiPromise<T> implements PromiseLike<T> {
  constructor(protected readonly result: Promise<WithResponse<T>>) {}

  withResponse(): Promise<WithResponse<T>> {
    return this.result;
  }

  then<A = T, B = never>(
    onFulfilled?: ((value: T) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.result.then((result) => result.data).then(onFulfilled, onRejected);
  }

  catch<B = never>(onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<T | B> {
    return this.then(undefined, onRejected);
  }

  finally(onFinally?: (() => void) | null): Promise<T> {
    return this.then().finally(onFinally);
  }

  get [Symbol.toStringTag](): string {
    return 'ApiPromise';
  }
}

/** At most this many items in `toArray()` unless a limit is given (a runaway loop costs requests). */
export const MAX_TO_ARRAY = 10_000;

/**
 * The first page of a list, as an ApiPromise, that is also an async iterable over every item of
 * every page: `for await (const job of client.sdr2hdr.jobs.list({ status: 'failed' }))` requests the
 * next page (`starting_after` = the previous page's `next_cursor`) only when the loop gets there.
 */
export class PagePromise<T> extends ApiPromise<ListResponse<T>> implements AsyncIterable<T> {
  constructor(
    firstPage: Promise<WithResponse<ListResponse<T>>>,
    private readonly nextPage: (cursor: string) => Promise<ListResponse<T>>,
  ) {
    super(firstPage);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    let page = (await this.result).data;
    for (;;) {
      yield* page.data;
      if (!page.has_more || !page.next_cursor) return;
      page = await this.nextPage(page.next_cursor);
    }
  }

  /** Every item of every page, up to `limit` (default and ceiling MAX_TO_ARRAY), in the list's order. */
  async toArray(options: { limit?: number } = {}): Promise<T[]> {
    const limit = Math.min(options.limit ?? MAX_TO_ARRAY, MAX_TO_ARRAY);
    const items: T[] = [];
    if (limit <= 0) return items;
    for await (const item of this) {
      items.push(item);
      if (items.length >= limit) break;
    }
    return items;
  }
}
