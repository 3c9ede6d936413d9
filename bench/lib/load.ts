// HTTP load from this process with autocannon: fixed connections for a fixed time, as a busy
// integration would hold them.
import { Agent, request } from 'node:http';
import autocannon, { type RequestSpec } from 'autocannon';
import { alternate, percentile } from './stats';

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

/**
 * The same load as `load`, timed here to the microsecond: `connections` keep-alive clients, each sending
 * its next request when the last one has been read, for `seconds`. autocannon's latencies are whole
 * milliseconds, so on paths answered in 1–5 ms a ratio of two of them moves in steps of 20–100 % from
 * rounding alone (3 ms against 4 ms reads as 1.33×); the growth bench compares exactly such paths.
 */
export async function timedLoad(options: LoadOptions): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: options.connections });
  const latencies: number[] = [];
  const failedStatuses: Record<string, number> = {};
  let failures = 0;
  const url = new URL(options.url);
  const ends = performance.now() + options.seconds * 1000;
  const client = async (): Promise<void> => {
    while (performance.now() < ends) {
      const base: RequestSpec = { method: options.method ?? 'GET', headers: options.headers, body: options.body };
      const spec = options.setupRequest ? options.setupRequest(base) : base;
      const started = performance.now();
      try {
        const status = await send(agent, url, spec);
        if (status < 200 || status >= 300) {
          failures++;
          failedStatuses[status] = (failedStatuses[status] ?? 0) + 1;
        } else latencies.push(performance.now() - started);
      } catch {
        failures++;
      }
    }
  };
  await Promise.all(Array.from({ length: options.connections }, client));
  agent.destroy();
  return {
    requestsPerSecond: latencies.length / options.seconds,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    requests: latencies.length + failures,
    failures,
    failedStatuses,
  };
}

/** One request; resolves with its status once the whole body has been read. */
function send(agent: Agent, url: URL, spec: RequestSpec): Promise<number> {
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { agent, method: spec.method, headers: spec.headers }, (response) => {
      response.on('data', () => undefined);
      response.on('end', () => resolve(response.statusCode ?? 0));
      response.on('error', reject);
    });
    outgoing.on('error', reject);
    outgoing.end(spec.body);
  });
}
