// A private OpenStack Swift with the s3api middleware on loopback (docs/operations.md, "S3-compatible stores"): its own
// temp folder, free ports and four server processes, so every storage test runs against a real S3
// implementation (real signatures, real multipart) and parallel runs never meet. `npm run swift`
// (scripts/swift.js) starts one by hand and prints the S3_* settings for it.
import { CreateBucketCommand, HeadBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { freePort } from './ports';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface SwiftServer {
  /** The S3 endpoint (the proxy), e.g. http://127.0.0.1:41234 */
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** STORAGE_BACKEND=s3 settings for an API or worker using this server and `bucket`. */
  env(bucket: string, prefix?: string): Record<string, string>;
  /** Stops the proxy only (the S3 endpoint refuses connections); data stays. */
  stopProxy(): Promise<void>;
  /** Starts the proxy again on the same port. */
  startProxy(): Promise<void>;
  stop(): Promise<void>;
}

type Role = 'account' | 'container' | 'object';
const ROLES: Role[] = ['account', 'container', 'object'];

function commonDefaults(dir: string, port: number): string {
  return [
    '[DEFAULT]',
    `devices = ${dir}/srv`,
    'mount_check = false',
    'disable_fallocate = true',
    'bind_ip = 127.0.0.1',
    `bind_port = ${port}`,
    'workers = 0',
    `user = ${userInfo().username}`,
    `swift_dir = ${dir}/etc`,
    // Swift logs to syslog; there is none here, and the tests read the S3 answers instead.
    'log_level = ERROR',
    '',
  ].join('\n');
}

function serverConf(dir: string, role: Role, port: number): string {
  return `${commonDefaults(dir, port)}
[pipeline:main]
pipeline = ${role}-server

[app:${role}-server]
use = egg:swift#${role}
`;
}

function proxyConf(dir: string, port: number): string {
  // Section name in the pipeline → Swift's entry point.
  const filters = Object.entries({
    catch_errors: 'catch_errors',
    gatekeeper: 'gatekeeper',
    healthcheck: 'healthcheck',
    'proxy-logging': 'proxy_logging',
    listing_formats: 'listing_formats',
    copy: 'copy',
    slo: 'slo',
    dlo: 'dlo',
  }).map(([section, egg]) => `[filter:${section}]\nuse = egg:swift#${egg}\n`);
  return `${commonDefaults(dir, port)}
[pipeline:main]
pipeline = catch_errors gatekeeper healthcheck proxy-logging cache listing_formats s3api tempauth copy slo dlo proxy-logging proxy-server

[app:proxy-server]
use = egg:swift#proxy
account_autocreate = true
# Generous: on a loaded 2-core machine the account and container servers can take seconds to answer,
# and Swift's default (10 s) would turn that into 503 "Please reduce your request rate".
node_timeout = 60

[filter:s3api]
use = egg:swift#s3api
location = us-east-1

[filter:tempauth]
use = egg:swift#tempauth
user_test_tester = testing .admin

[filter:cache]
use = egg:swift#memcache

${filters.join('\n')}`;
}

// Generous: on a loaded 2-core machine the four Python servers can take a minute to answer.
async function waitForHealth(endpoint: string, child: ChildProcess, timeoutMs = 90_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`swift-proxy-server exited with ${child.exitCode}`);
    try {
      const response = await fetch(`${endpoint}/healthcheck`);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`Swift at ${endpoint} did not answer /healthcheck within ${timeoutMs} ms`);
}

// The proxy's /healthcheck answers before the account and container servers do (Python start-up is
// slow on a loaded machine): a bucket created and listed through s3api proves all of them serve.
async function waitForBackends(server: SwiftServer, timeoutMs = 90_000): Promise<void> {
  const client = new S3Client({
    endpoint: server.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
    maxAttempts: 1,
  });
  const until = Date.now() + timeoutMs;
  let last: unknown;
  try {
    while (Date.now() < until) {
      try {
        // A create that timed out may still have made it: whether it exists now is what counts.
        await client.send(new CreateBucketCommand({ Bucket: 'mj-swift-ready' })).catch((error: unknown) => {
          last = error;
        });
        await client.send(new HeadBucketCommand({ Bucket: 'mj-swift-ready' }));
        return;
      } catch (error) {
        last = error;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
  } finally {
    client.destroy();
  }
  throw new Error(`Swift at ${server.endpoint} could not create a bucket within ${timeoutMs} ms: ${String(last)}`);
}

async function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

// The three rings in one Python process through Swift's RingBuilder, as `swift-ring-builder <ring> create 6 1 1`,
// `add r1z1-127.0.0.1:<port>/d1 1` and `rebalance` make them (one partition power of 6, one replica, one
// device: the smallest ring Swift accepts) — nine swift-ring-builder processes, each loading Swift, cost
// 8.1 CPU seconds per server; this costs 0.9 (docs/development.md). The servers read only the .ring.gz files.
const RING_SCRIPT = `
import json, sys
from swift.common.ring import RingBuilder
etc, ports = sys.argv[1], json.loads(sys.argv[2])
for role, port in ports.items():
    builder = RingBuilder(6, 1, 1)
    builder.add_dev({'id': 0, 'region': 1, 'zone': 1, 'ip': '127.0.0.1', 'port': port,
                     'replication_ip': '127.0.0.1', 'replication_port': port, 'device': 'd1', 'weight': 1, 'meta': ''})
    builder.rebalance()
    builder.get_ring().save('%s/%s.ring.gz' % (etc, role))
`;

async function buildRings(etc: string, ports: Record<Role, number>): Promise<void> {
  await run(await swiftPython(), ['-c', RING_SCRIPT, etc, JSON.stringify(ports)], { cwd: etc });
}

let python: Promise<string> | undefined;
/**
 * The Python that has Swift's modules: the one swift-ring-builder (on PATH, from the swift package) runs
 * with, read from its #! line — a `python3` first on PATH (pyenv, a virtualenv) may not have them.
 */
function swiftPython(): Promise<string> {
  python ??= (async () => {
    const { stdout } = await run('sh', ['-c', 'command -v swift-ring-builder']);
    const shebang = (await readFile(stdout.trim(), 'utf8')).split('\n')[0];
    const interpreter = /^#!\s*(\S+)(?:\s+(\S+))?/.exec(shebang);
    if (!interpreter) throw new Error(`swift-ring-builder (${stdout.trim()}) names no interpreter: ${shebang}`);
    // `#!/usr/bin/env python3` names the program after env.
    return interpreter[1].endsWith('/env') && interpreter[2] ? interpreter[2] : interpreter[1];
  })();
  return python;
}

/** Starts a fresh single-node Swift (one replica) and waits until its S3 endpoint answers. */
export async function startSwift(): Promise<SwiftServer> {
  const dir = await mkdtemp(join(tmpdir(), 'mj-swift-'));
  await mkdir(join(dir, 'etc'), { recursive: true });
  await mkdir(join(dir, 'srv', 'd1'), { recursive: true });
  const ports = { account: await freePort(), container: await freePort(), object: await freePort() };
  const proxyPort = await freePort();
  const etc = join(dir, 'etc');
  await writeFile(
    join(etc, 'swift.conf'),
    `[swift-hash]\nswift_hash_path_prefix = mjtest\nswift_hash_path_suffix = mjtest\n\n[storage-policy:0]\nname = Policy-0\ndefault = yes\n`,
  );
  await Promise.all(
    ROLES.map((role) => writeFile(join(etc, `${role}-server.conf`), serverConf(dir, role, ports[role]))),
  );
  await buildRings(etc, ports);
  await writeFile(join(etc, 'proxy-server.conf'), proxyConf(dir, proxyPort));

  const children: ChildProcess[] = [];
  let proxy: ChildProcess | undefined;
  const launch = (role: Role | 'proxy'): ChildProcess => {
    const child = spawn(`swift-${role}-server`, [join(etc, `${role}-server.conf`)], {
      stdio: ['ignore', 'ignore', process.env.SWIFT_DEBUG ? 'inherit' : 'ignore'],
    });
    child.on('error', () => undefined); // a missing binary shows as exitCode in waitForHealth
    return child;
  };
  for (const role of ROLES) children.push(launch(role));
  const endpoint = `http://127.0.0.1:${proxyPort}`;
  const server: SwiftServer = {
    endpoint,
    accessKeyId: 'test:tester',
    secretAccessKey: 'testing',
    env: (bucket, prefix = '') => ({
      STORAGE_BACKEND: 's3',
      S3_BUCKET: bucket,
      S3_PREFIX: prefix,
      S3_ENDPOINT: endpoint,
      S3_REGION: 'us-east-1',
      S3_FORCE_PATH_STYLE: 'true',
      AWS_ACCESS_KEY_ID: 'test:tester',
      AWS_SECRET_ACCESS_KEY: 'testing',
    }),
    async startProxy() {
      proxy = launch('proxy');
      await waitForHealth(endpoint, proxy);
    },
    async stopProxy() {
      await stopChild(proxy);
    },
    async stop() {
      await stopChild(proxy);
      await Promise.all(children.map(stopChild));
      await rm(dir, { recursive: true, force: true });
    },
  };
  try {
    await server.startProxy();
    await waitForBackends(server);
  } catch (error) {
    await server.stop();
    throw error;
  }
  return server;
}
