// `npm run build && npx tsc -p tsconfig.bench.json && node dist-bench/bench/profile-submits.js [seconds]`:
// what one submit costs our API (the load of bench/submits.ts, our side only): PostgreSQL statements,
// Redis commands and round trips, and CPU ms per submit, counted inside the API process by
// bench/lib/io-count.ts, and the functions with the most self time in a CPU profile of the measured
// window (the profile is left in the printed directory for a closer look).
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fakeHeartbeat } from './lib/client';
import { createEnvironment, type BenchEnvironment } from './lib/environment';
import { cpuMsOf, sleep, startProcess } from './lib/processes';
import {
  bareHeaders,
  drainQueue,
  ourHeaders,
  REGION,
  startBareSubmitServer,
  submitAccounts,
  submitEnv,
  submitLoad,
} from './submits';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Self time per function (name, file, line), in ms, most first. */
function selfTimes(profile: CpuProfile, top: number): string[] {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map<string, number>();
  profile.samples.forEach((id, index) => {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    const where = url ? `${url.replace(/^.*node_modules\//, '~/').replace(/^.*\/dist\//, '')}:${lineNumber + 1}` : '';
    const name = `${functionName || '(anonymous)'} ${where}`.trim();
    self.set(name, (self.get(name) ?? 0) + (profile.timeDeltas[index] ?? 0) / 1000);
  });
  const total = [...self.values()].reduce((sum, ms) => sum + ms, 0);
  return [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, ms]) => `${((100 * ms) / total).toFixed(1).padStart(5)} %  ${name}`);
}

/**
 * CPU ms so far of each PostgreSQL backend connected to the environment's database. The two sides are
 * measured one after the other, so a window's growth is the side then under load (the idle side adds
 * nothing; a backend that ends within the window loses its share, so the figure is a floor).
 */
async function backendCpuMs(env: BenchEnvironment): Promise<Map<number, number>> {
  const backends = await env.query<{ pid: number }>(
    'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
  );
  const times = await Promise.all(backends.map(async ({ pid }) => [pid, await cpuMsOf(pid).catch(() => 0)] as const));
  return new Map(times);
}

/** The backends' CPU ms between two readings of backendCpuMs. */
function backendCpuGrowth(before: Map<number, number>, after: Map<number, number>): number {
  let ms = 0;
  for (const [pid, now] of after) ms += now - (before.get(pid) ?? 0);
  return ms;
}

async function main(): Promise<void> {
  const seconds = Number(process.argv[2] ?? 10);
  const dir = await mkdtemp(join(tmpdir(), 'mediajobs-submit-profile-'));
  const env = await createEnvironment('subprof');
  const refusals: string[] = [];
  const api = await startProcess(
    'dist/src/main.js',
    { ...env.serviceEnv, ...submitEnv, IO_COUNT_DIR: dir, IO_COUNT_PROFILE: process.env.IO_COUNT_PROFILE ?? '1' },
    {
      nodeArgs: ['--require', join(__dirname, 'lib/io-count.js')],
      // Kept to say why, should a submit fail.
      onLine: (line) => {
        if (/"statusCode":[45]\d\d/.test(line) && refusals.length < 5) refusals.push(line);
      },
    },
  );
  const bare = await startBareSubmitServer(env);
  const heartbeat = fakeHeartbeat(env, REGION);
  try {
    const accounts = await submitAccounts(env, api.url, 20);
    // The bare server's CPU per submit under the same load, for scale.
    await submitLoad(bare.url, accounts, 2, bareHeaders);
    await drainQueue(env);
    const bareCpuBefore = await cpuMsOf(bare.pid);
    const bareDbBefore = await backendCpuMs(env);
    const bareRun = await submitLoad(bare.url, accounts, seconds, bareHeaders);
    const bareCpuMs = (await cpuMsOf(bare.pid)) - bareCpuBefore;
    const bareDbMs = backendCpuGrowth(bareDbBefore, await backendCpuMs(env));
    await submitLoad(api.url, accounts, 2, ourHeaders);
    await drainQueue(env);
    const dbBefore = await backendCpuMs(env);
    api.child.kill('SIGWINCH');
    const run = await submitLoad(api.url, accounts, seconds, ourHeaders);
    api.child.kill('SIGWINCH');
    const dbMs = backendCpuGrowth(dbBefore, await backendCpuMs(env));
    await sleep(1000);
    const counts = JSON.parse(await readFile(join(dir, 'counts.json'), 'utf8')) as {
      pgStatements: Record<string, number>;
      redisCommands: Record<string, number>;
      redisRoundTrips: number;
      cpuMs: number;
      userMs: number;
      systemMs: number;
    };
    const per = (n: number) => (n / run.requests).toFixed(2);
    const pgTotal = Object.values(counts.pgStatements).reduce((sum, n) => sum + n, 0);
    const redisTotal = Object.values(counts.redisCommands).reduce((sum, n) => sum + n, 0);
    const lines = [
      `${run.requests} submits in ${seconds} s (${run.requestsPerSecond.toFixed(0)}/s, p50 ${run.p50Ms} ms, p99 ${run.p99Ms} ms, ${run.failures} failed)`,
      `bare: ${bareRun.requests} submits (${bareRun.requestsPerSecond.toFixed(0)}/s, p99 ${bareRun.p99Ms} ms), ${(bareCpuMs / bareRun.requests).toFixed(2)} CPU ms per submit; its PostgreSQL backends ${(bareDbMs / bareRun.requests).toFixed(2)} CPU ms per submit`,
      `our PostgreSQL backends: ${per(dbMs)} CPU ms per submit`,
      `per submit: ${per(counts.cpuMs)} CPU ms (user ${per(counts.userMs)}, system ${per(counts.systemMs)}), ${per(pgTotal)} PostgreSQL statements (each a round trip), ${per(redisTotal)} Redis commands in ${per(counts.redisRoundTrips)} round trips`,
      ...refusals.map((line) => `refused: ${line.slice(0, 400)}`),
      'PostgreSQL statements per submit:',
      ...Object.entries(counts.pgStatements)
        .sort((a, b) => b[1] - a[1])
        .map(([text, n]) => `  ${per(n)}  ${text}`),
      'Redis commands per submit:',
      ...Object.entries(counts.redisCommands)
        .sort((a, b) => b[1] - a[1])
        .map(([name, n]) => `  ${per(n)}  ${name}`),
      `top self time (profile: ${join(dir, 'api.cpuprofile')}):`,
      ...(process.env.IO_COUNT_PROFILE === '0'
        ? []
        : selfTimes(JSON.parse(await readFile(join(dir, 'api.cpuprofile'), 'utf8')) as CpuProfile, 30).map(
            (line) => `  ${line}`,
          )),
    ];
    console.log(lines.join('\n'));
  } finally {
    heartbeat.stop();
    await bare.stop();
    await api.stop();
    await env.close();
  }
}

void main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
