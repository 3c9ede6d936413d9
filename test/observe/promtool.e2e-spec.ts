// The monitoring configuration in ops/ (issue 15): Debian's promtool checks the compose Prometheus config
// and the alert rules and runs the rules' unit tests; every series the Grafana dashboard and the alerts
// name is one the service exports.
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import '../../src/metrics/http-metrics';
import '../../src/metrics/job-metrics';
import { metricsRegistry } from '../../src/metrics/registry';
import { registerSnapshotReader, unregisterSnapshotReader } from '../../src/metrics/system-gauges';
import { ROOT } from '../support/dist-build';
import { dashboardExpressions, PROMTOOL } from '../support/prometheus';

const exec = promisify(execFile);
const OPS = join(ROOT, 'ops');

async function promtool(cwd: string, ...args: string[]): Promise<string> {
  try {
    const { stdout, stderr } = await exec(PROMTOOL, args, { cwd });
    return stdout + stderr;
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`promtool ${args.join(' ')} failed:\n${failed.stdout ?? ''}${failed.stderr ?? failed.message}`);
  }
}

describe('monitoring configuration (ops/)', () => {
  let dir: string;

  beforeAll(async () => {
    // The config reads the token from a file beside it (written by the compose entrypoint).
    dir = await mkdtemp(join(tmpdir(), 'mj-promtool-'));
    await cp(join(OPS, 'prometheus'), dir, { recursive: true });
    await writeFile(join(dir, 'metrics-token'), 'a-token-for-the-check-only');
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('promtool check config: the compose Prometheus config (scrape jobs, rule files) is valid', async () => {
    const output = await promtool(dir, 'check', 'config', 'prometheus.yml');
    expect(output).toMatch(/SUCCESS: prometheus\.yml is valid prometheus config file syntax/);
    expect(output).toMatch(/SUCCESS: 5 rules found/);
  });

  it('promtool check rules: the alert rules are valid', async () => {
    expect(await promtool(dir, 'check', 'rules', 'alerts.yml')).toMatch(/SUCCESS: 5 rules found/);
  });

  it('promtool test rules: each alert fires on the series that should raise it, and not on healthy ones', async () => {
    expect(await promtool(dir, 'test', 'rules', 'alerts.test.yml')).toMatch(/SUCCESS/);
  });

  it('every mediajobs_* series the dashboard and the alerts name is exported by the service', async () => {
    const reader = async () => ({});
    registerSnapshotReader('promtool-test', reader); // defines the API's scrape-time gauges
    const exported = new Set((await metricsRegistry.getMetricsAsJSON()).map((metric) => metric.name));
    unregisterSnapshotReader('promtool-test', reader);
    const alerts = await readFile(join(OPS, 'prometheus/alerts.yml'), 'utf8');
    const text = (await dashboardExpressions()).map((entry) => entry.expr).join('\n') + alerts;
    const named = new Set(
      [...text.matchAll(/\b(mediajobs_[a-z_]+)/g)].map((match) => match[1].replace(/_(bucket|count|sum)$/, '')),
    );
    expect(named.size).toBeGreaterThan(10);
    expect([...named].filter((name) => !exported.has(name))).toEqual([]);
  });
});
