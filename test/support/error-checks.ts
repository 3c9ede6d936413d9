// Shared by the e2e suites: what a client sees of an error response, and timing helpers.
import { CATALOGUE, type ErrorCode } from '../../src/common/errors/catalogue';
import type { JsonResponse, TestApi } from './app';

/** The envelope of `code`: status, family, retryable from the catalogue, request id = header, doc_url. */
export function expectError(
  api: Pick<TestApi, 'config'>,
  response: JsonResponse,
  code: ErrorCode,
  param?: string | null,
): void {
  const row = CATALOGUE[code];
  expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: row.status, code });
  const error = response.body.error;
  expect(error.type).toBe(row.type);
  expect(error.retryable).toBe(row.retryable);
  expect(typeof error.message).toBe('string');
  expect(error.message.length).toBeGreaterThan(0);
  expect(error.request_id).toMatch(/^req_[0-9A-Za-z]+$/);
  expect(response.headers.get('x-request-id')).toBe(error.request_id);
  expect(error.doc_url).toBe(`${api.config.docsUrl}/errors.html#${code}`);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  if (param !== undefined) expect(error.param).toBe(param);
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Resolves at the start (within `slackMs`) of a 1-second window that has not begun yet, so a burst
 * fits in one fresh rate-limit window that no earlier request has counted in.
 */
export async function alignToSecond(slackMs = 50): Promise<void> {
  for (;;) {
    const next = (Math.floor(Date.now() / 1000) + 1) * 1000;
    await sleep(next - Date.now());
    while (Date.now() < next) await sleep(1);
    if (Date.now() - next < slackMs) return;
  }
}

/** Polls `probe` every `everyMs` until it returns true; returns the elapsed ms, or throws after `timeoutMs`. */
export async function waitUntil(probe: () => Promise<boolean>, timeoutMs: number, everyMs = 25): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await probe()) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(everyMs);
  }
}
