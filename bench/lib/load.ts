// HTTP load from this process with autocannon: fixed connections for a fixed time, as a busy
// integration would hold them.
import autocannon, { type RequestSpec } from 'autocannon';
import { alternate } from './stats';

export interface LoadResult {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  /** Responses that were not 2xx, plus connection errors and timeouts: must be 0 for a valid run. */
  failures: number;
  /** The statuses of the responses that were not 2xx, counted ("401": 243), to say why a run failed. */
  failedStatuses: Record<string, number>;
}

export interface LoadOptions {
  url: string;
  connections: number;
  seconds: number;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** Rewrites each request before it is sent (rotate keys, fresh idempotency keys). */
  setupRequest?: (request: RequestSpec) => RequestSpec;
}

export async function load(options: LoadOptions): Promise<LoadResult> {
  const result = await autocannon({
    url: options.url,
    connections: options.connections,
    duration: options.seconds,
    requests: [
      {
        method: options.method ?? 'GET',
        headers: options.headers,
        body: options.body,
        ...(options.setupRequest ? { setupRequest: options.setupRequest } : {}),
      },
    ],
  });
  return {
    requestsPerSecond: result.requests.total / options.seconds,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    requests: result.requests.total,
    failures: result.non2xx + result.errors + result.timeouts,
    failedStatuses: Object.fromEntries(
      // autocannon 9 reports it; its type declarations do not list it yet.
      Object.entries((result as { statusCodeStats?: Record<string, { count: number }> }).statusCodeStats ?? {})
        .filter(([status]) => !status.startsWith('2'))
        .map(([status, stats]) => [status, stats.count]),
    ),
  };
}

/**
 * Warms both servers up, then runs `ours` and `bare` alternately for `rounds` rounds of `seconds`,
 * and refuses a run in which any request failed: its numbers would be meaningless.
 */
export async function loadBothWays<T extends LoadResult>(
  name: string,
  plan: { rounds: number; seconds: number; warmUpSeconds: number; log(message: string): void },
  ours: (seconds: number) => Promise<T>,
  bare: (seconds: number) => Promise<T>,
): Promise<{ ours: T[]; bare: T[] }> {
  plan.log(`${name}: warming up both servers`);
  await ours(plan.warmUpSeconds);
  await bare(plan.warmUpSeconds);
  const runs = await alternate<T>(
    plan.rounds,
    () => ours(plan.seconds),
    () => bare(plan.seconds),
  );
  const failures = [...runs.ours, ...runs.bare].reduce((sum, run) => sum + run.failures, 0);
  if (failures > 0) {
    const statuses: Record<string, number> = {};
    for (const run of [...runs.ours, ...runs.bare])
      for (const [status, count] of Object.entries(run.failedStatuses ?? {}))
        statuses[status] = (statuses[status] ?? 0) + count;
    throw new Error(
      `${name}: ${failures} requests failed (statuses ${JSON.stringify(statuses)}); the numbers would be meaningless`,
    );
  }
  return runs;
}
