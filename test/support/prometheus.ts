// Debian's `prometheus` (apt package `prometheus`) for a test: its own temp folder (config, TSDB), a free
// loopback port, a short scrape interval, killed in teardown; PromQL through its HTTP API.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from './app';

export const PROMETHEUS = process.env.PROMETHEUS_PATH ?? '/usr/bin/prometheus';
export const PROMTOOL = process.env.PROMTOOL_PATH ?? '/usr/bin/promtool';

export interface ScrapeJob {
  name: string;
  targets: string[];
  bearerToken?: string;
}

export interface PromSample {
  metric: Record<string, string>;
  value: number;
}

export interface TestPrometheus {
  url: string;
  /** An instant PromQL query; each series' value as a number. */
  query(promql: string): Promise<PromSample[]>;
  /** The log (stderr) so far, for failure messages. */
  log(): string;
  close(): Promise<void>;
}

export function scrapeConfig(jobs: ScrapeJob[], intervalSeconds: number): string {
  const lines = [
    'global:',
    `  scrape_interval: ${intervalSeconds}s`,
    `  evaluation_interval: ${intervalSeconds}s`,
    'scrape_configs:',
  ];
  for (const job of jobs) {
    lines.push(`  - job_name: ${JSON.stringify(job.name)}`, `    scrape_timeout: ${intervalSeconds}s`);
    if (job.bearerToken) lines.push('    authorization:', `      credentials: ${JSON.stringify(job.bearerToken)}`);
    lines.push('    static_configs:', `      - targets: ${JSON.stringify(job.targets)}`);
  }
  return `${lines.join('\n')}\n`;
}

export async function startPrometheus(jobs: ScrapeJob[], intervalSeconds = 1): Promise<TestPrometheus> {
  const dir = await mkdtemp(join(tmpdir(), 'mj-prometheus-'));
  const config = join(dir, 'prometheus.yml');
  await writeFile(config, scrapeConfig(jobs, intervalSeconds));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let log = '';
  const child: ChildProcess = spawn(
    PROMETHEUS,
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  child.stderr!.on('data', (chunk: Buffer) => (log = (log + chunk.toString()).slice(-20_000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const close = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    await rm(dir, { recursive: true, force: true });
  };

  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`prometheus exited (${child.exitCode}):\n${log}`);
    const ready = await fetch(`${url}/-/ready`).then(
      (response) => response.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) {
      await close();
      throw new Error(`prometheus did not get ready within 30 s:\n${log}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }

  return {
    url,
    log: () => log,
    close,
    async query(promql) {
      const response = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(promql)}`);
      const body = (await response.json()) as {
        status: string;
        error?: string;
        data?: { resultType: string; result: { metric: Record<string, string>; value: [number, string] }[] };
      };
      if (body.status !== 'success') throw new Error(`PromQL ${promql}: ${body.error}`);
      if (body.data!.resultType !== 'vector')
        throw new Error(`PromQL ${promql}: a ${body.data!.resultType}, not a vector`);
      return body.data!.result.map((entry) => ({ metric: entry.metric, value: Number(entry.value[1]) }));
    },
  };
}

/** Every PromQL expression of the dashboard's panels. */
export async function dashboardExpressions(): Promise<{ title: string; expr: string }[]> {
  const dashboard = JSON.parse(
    await readFile(resolve(__dirname, '../../ops/grafana/dashboards/mediajobs.json'), 'utf8'),
  ) as {
    panels: { title: string; targets?: { expr: string }[] }[];
  };
  return dashboard.panels.flatMap((panel) => (panel.targets ?? []).map(({ expr }) => ({ title: panel.title, expr })));
}
