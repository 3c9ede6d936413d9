// Benchmark 1: GET /v1/sdr2hdr/jobs/{id} (auth, rate limit, indexed reads) against bare Fastify + pg
// running the job's SELECT. Also yields the API's resident memory after the load (benchmark 5).
import { join } from 'node:path';
import { createAccount, fakeHeartbeat, submitJob, uploadFile } from './lib/client';
import { createEnvironment } from './lib/environment';
import { load, loadBothWays, type LoadResult } from './lib/load';
import { sdrClip } from './lib/media';
import { cpuSecondsOf, memoryOf, startProcess, type Service } from './lib/processes';
import { compare, type BenchContext, type BenchResult } from './lib/report';
import { median, round } from './lib/stats';

const CONNECTIONS = 50;
const REGION = 'bench';

/**
 * With BENCH_CPU_PROFILE_DIR set, `name` runs with lib/cpu-profile.js preloaded and writes
 * <dir>/reads-<name>.cpuprofile when it stops (BENCH_CPU_PROFILE_DELAY_MS: when profiling starts).
 */
function profiled(name: string): { env: Record<string, string>; nodeArgs: string[] } {
  const { BENCH_CPU_PROFILE_DIR: dir, BENCH_CPU_PROFILE_DELAY_MS: delay } = process.env;
  if (!dir) return { env: {}, nodeArgs: [] };
  return {
    env: {
      BENCH_CPU_PROFILE: join(dir, `reads-${name}.cpuprofile`),
      ...(delay ? { BENCH_CPU_PROFILE_DELAY_MS: delay } : {}),
    },
    nodeArgs: ['-r', join(__dirname, 'lib/cpu-profile.js')],
  };
}

/** A load run that also measures the server's CPU time per request. */
async function withCpu(
  server: Service,
  options: Parameters<typeof load>[0],
): Promise<LoadResult & { cpuMicrosPerRequest: number }> {
  const before = await cpuSecondsOf(server.pid);
  const result = await load(options);
  const used = (await cpuSecondsOf(server.pid)) - before;
  return { ...result, cpuMicrosPerRequest: round((used * 1e6) / Math.max(1, result.requests), 0) };
}

export async function benchReads(context: BenchContext): Promise<{ result: BenchResult; apiRssMiB: number }> {
  const seconds = context.quick ? 2 : 10;
  const warmUpSeconds = context.quick ? 1 : 2;
  const rounds = context.quick ? 1 : 3;
  const env = await createEnvironment('reads');
  const apiProfile = profiled('api');
  const api = await startProcess('dist/src/main.js', { ...env.serviceEnv, REGION, ...apiProfile.env }, apiProfile);
  const bareProfile = profiled('bare');
  const bare = await startProcess(
    'dist-bench/bench/bare/read-server.js',
    { DATABASE_URL: env.databaseUrl, ...bareProfile.env },
    bareProfile,
  );
  const heartbeat = fakeHeartbeat(env, REGION);
  try {
    const account = await createAccount(env, api.url, 1000);
    const uploadId = await uploadFile(api.url, account.apiKey, await sdrClip(320, 180, 1));
    const job = await submitJob(api.url, account.apiKey, { inputs: [{ upload_id: uploadId }] });
    const ours = (duration: number) =>
      withCpu(api, {
        url: `${api.url}/v1/sdr2hdr/jobs/${job.job_id}`,
        connections: CONNECTIONS,
        seconds: duration,
        headers: { 'x-api-key': account.apiKey },
      });
    const baseline = (duration: number) =>
      withCpu(bare, {
        url: `${bare.url}/v1/sdr2hdr/jobs/${job.job_id}`,
        connections: CONNECTIONS,
        seconds: duration,
        headers: { 'x-account-id': account.accountId },
      });
    const runs = await loadBothWays('reads', { rounds, seconds, warmUpSeconds, log: context.log }, ours, baseline);
    const memory = await memoryOf(api.pid);
    const p99 = median(runs.ours.map((run) => run.p99Ms));
    const result = compare(
      'reads',
      `GET /v1/sdr2hdr/jobs/{id}, ${CONNECTIONS} connections × ${seconds} s × ${rounds} rounds vs bare Fastify + pg (same SELECT)`,
      {
        metric: 'req/s',
        ours: runs.ours.map((run) => run.requestsPerSecond),
        bare: runs.bare.map((run) => run.requestsPerSecond),
        higherIsBetter: true,
      },
      { text: '≥ 0.70 of bare req/s and p99 < 25 ms', met: (ratio) => ratio >= 0.7 && p99 < 25 },
      {
        ours_p50_ms: median(runs.ours.map((run) => run.p50Ms)),
        ours_p99_ms: p99,
        bare_p50_ms: median(runs.bare.map((run) => run.p50Ms)),
        bare_p99_ms: median(runs.bare.map((run) => run.p99Ms)),
        // CPU time of the server process per request (load-robust, unlike req/s on a shared machine).
        ours_cpu_us_per_request: median(runs.ours.map((run) => run.cpuMicrosPerRequest)),
        bare_cpu_us_per_request: median(runs.bare.map((run) => run.cpuMicrosPerRequest)),
        api_rss_mib: round(memory.rssMiB, 1),
        api_peak_rss_mib: round(memory.peakRssMiB, 1),
      },
    );
    return { result, apiRssMiB: memory.rssMiB };
  } finally {
    heartbeat.stop();
    await api.stop();
    await bare.stop();
    await env.close();
  }
}
