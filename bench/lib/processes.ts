// Child processes under measure: our API and worker exactly as production starts them (compiled
// entry points, NODE_ENV=production, JSON logs to stdout), and the bare baselines beside them.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { freePort } from '../../test/support/ports';
import { ROOT } from './environment';
import { productionNodeArgs } from './production-args';

export interface Service {
  child: ChildProcess;
  pid: number;
  /** http://127.0.0.1:port for a process that listens, '' for a worker. */
  url: string;
  stop(): Promise<void>;
}

export { freePort };

/**
 * Starts `node <script>` from the repository root, with the node flags its npm script gives it (the API:
 * `start:api`). Logs go to /dev/null (the process still formats them, as it would in production);
 * stderr is kept so that a failed start says why.
 */
export async function startProcess(
  script: string,
  env: Record<string, string>,
  options: {
    listen?: boolean;
    nodeArgs?: string[];
    cpu?: number;
    /** Receives each stdout line (JSON logs); without it stdout goes to /dev/null. */
    onLine?: (line: string) => void;
  } = {},
): Promise<Service> {
  const port = options.listen === false ? 0 : await freePort();
  const url = options.listen === false ? '' : `http://127.0.0.1:${port}`;
  const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const command = [
    process.execPath,
    ...productionNodeArgs(scripts, script),
    ...(options.nodeArgs ?? []),
    join(ROOT, script),
  ];
  // Pinned to one core (`taskset -c N`): the process and its children (ffmpeg) run only there.
  if (options.cpu !== undefined) command.unshift('taskset', '-c', String(options.cpu));
  const child = spawn(command[0], command.slice(1), {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      ...env,
      PORT: String(port),
      PUBLIC_BASE_URL: url || 'http://127.0.0.1',
    },
    stdio: ['ignore', options.onLine ? 'pipe' : 'ignore', 'pipe'],
  });
  if (options.onLine) {
    const onLine = options.onLine;
    let pending = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      const lines = (pending + chunk.toString()).split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) if (line) onLine(line);
    });
  }
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const service: Service = {
    child,
    pid: child.pid!,
    url,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
  if (url) {
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${script} exited with ${child.exitCode}: ${stderr}`);
      if (await answers(`${url}/health/live`)) break;
      if (Date.now() > deadline) {
        await service.stop();
        throw new Error(`${script} did not answer within 30 s: ${stderr}`);
      }
      await sleep(100);
    }
  }
  return service;
}

async function answers(url: string): Promise<boolean> {
  try {
    const response = await fetch(url);
    await response.arrayBuffer();
    return response.ok;
  } catch {
    return false;
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}

/** CPU time (user + system) a process has used so far, in ms, from /proc: robust to load, unlike wall time. */
export async function cpuMsOf(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}

/** USER_HZ: what /proc counts CPU time in (100 on every Linux this runs on). */
const CLOCK_TICKS = 100;

/** Resident memory of a process now and at its peak (VmHWM), in MiB, from /proc. */
export async function memoryOf(pid: number): Promise<{ rssMiB: number; peakRssMiB: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => {
    const match = new RegExp(`^${name}:\\s+(\\d+) kB$`, 'm').exec(status);
    return match ? Number(match[1]) / 1024 : Number.NaN;
  };
  return { rssMiB: field('VmRSS'), peakRssMiB: field('VmHWM') };
}

/** CPU time (user + system) a process has used so far, in seconds, from /proc (10 ms resolution). */
export async function cpuSecondsOf(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces: count fields from after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name; clock ticks of 1/100 s.
  return (Number(fields[11]) + Number(fields[12])) / 100;
}
