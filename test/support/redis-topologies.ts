// Private Redis deployments for the scale tests, started from Debian's redis-server and redis-sentinel
// on loopback ports of their own, each in a folder of its own (never the machine's Redis on 6379):
// a 3-master + 3-replica Redis Cluster, and a master + replica watched by 3 sentinels. `dispose()`
// must run in afterAll: it SIGKILLs every process started and removes the folder.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { freePort } from './app';
import { pollUntil } from './processes';

const exec = promisify(execFile);

/** One redis-server or redis-sentinel process of a private deployment. */
interface Server {
  port: number;
  child: ChildProcess;
  exited: Promise<void>;
  /** How it was started, for restart(). */
  binary: 'redis-server' | 'redis-sentinel';
  conf: string;
  password?: string;
}

/** What every private server shares: its folder, start and kill. */
abstract class PrivateDeployment {
  protected readonly servers: Server[] = [];
  protected constructor(readonly dir: string) {}

  /** Starts `binary` with a config file written to the folder; resolves once it answers PING (as `password`). */
  protected async startServer(
    binary: 'redis-server' | 'redis-sentinel',
    name: string,
    lines: string[],
    password?: string,
  ): Promise<Server> {
    const port = await freePort();
    const conf = join(this.dir, `${name}.conf`);
    await writeFile(
      conf,
      [
        `port ${port}`,
        'bind 127.0.0.1',
        `dir ${this.dir}`,
        'loglevel warning',
        `logfile ${join(this.dir, `${name}.log`)}`,
        ...lines,
      ]
        .map((line) => line.replaceAll('$PORT', String(port)))
        .join('\n') + '\n',
    );
    const server: Server = { port, binary, conf, password, ...spawnServer(binary, conf) };
    this.servers.push(server);
    await pollUntil(`${binary} ${name} on ${port} to answer`, () => ping(port, password), 10_000, 50);
    return server;
  }

  /** Starts a killed server again, with its config (a cluster node keeps its nodes.conf: it rejoins). */
  async restart(port: number): Promise<void> {
    const server = this.servers.find((candidate) => candidate.port === port);
    if (!server) throw new Error(`no private server on port ${port}`);
    Object.assign(server, spawnServer(server.binary, server.conf));
    await pollUntil(`${server.binary} on ${port} to answer again`, () => ping(port, server.password), 10_000, 50);
  }

  /** SIGKILL of the server on `port`, as a machine lost: no shutdown, no last write. */
  async kill(port: number): Promise<void> {
    const server = this.servers.find((candidate) => candidate.port === port);
    if (!server) throw new Error(`no private server on port ${port}`);
    server.child.kill('SIGKILL');
    await server.exited;
  }

  async dispose(): Promise<void> {
    for (const server of this.servers) server.child.kill('SIGKILL');
    await Promise.all(this.servers.map((server) => server.exited));
    await rm(this.dir, { recursive: true, force: true });
  }
}

function spawnServer(binary: string, conf: string): { child: ChildProcess; exited: Promise<void> } {
  const child = spawn(binary, [conf], { stdio: 'ignore' });
  return { child, exited: new Promise<void>((resolve) => child.once('exit', () => resolve())) };
}

async function ping(port: number, password?: string): Promise<boolean> {
  const client = new Redis({
    port,
    host: '127.0.0.1',
    password,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

/** redis-cli against a private server: its reply, trimmed. */
export async function redisCli(port: number, ...args: string[]): Promise<string> {
  return redisCliAs(undefined, port, args);
}

/** redis-cli authenticated with `password` (through REDISCLI_AUTH, so it is on no command line). */
async function redisCliAs(password: string | undefined, port: number, args: string[]): Promise<string> {
  const env = password === undefined ? process.env : { ...process.env, REDISCLI_AUTH: password };
  const { stdout } = await exec('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], {
    timeout: 30_000,
    env,
  });
  return stdout.trim();
}

/**
 * Three masters and three replicas (`redis-cli --cluster create … --cluster-replicas 1`). A node is
 * judged failed after 1 s (cluster-node-timeout) so a replica takes over within seconds; a slot
 * without its master does not stop the other slots (cluster-require-full-coverage no).
 */
export class PrivateRedisCluster extends PrivateDeployment {
  static async start(): Promise<PrivateRedisCluster> {
    const cluster = new PrivateRedisCluster(await mkdtemp(join(tmpdir(), 'mj-redis-cluster-')));
    try {
      for (let i = 0; i < 6; i++) {
        const busPort = await freePort();
        await cluster.startServer('redis-server', `node${i}`, [
          'cluster-enabled yes',
          `cluster-port ${busPort}`,
          `cluster-config-file node${i}-nodes.conf`,
          'cluster-node-timeout 1000',
          'cluster-replica-validity-factor 0',
          'cluster-require-full-coverage no',
          'save ""',
          'appendonly no',
        ]);
      }
      await exec(
        'redis-cli',
        [
          '--cluster',
          'create',
          ...cluster.servers.map((s) => `127.0.0.1:${s.port}`),
          '--cluster-replicas',
          '1',
          '--cluster-yes',
        ],
        { timeout: 60_000 },
      );
      await pollUntil(
        'the cluster to be ok on every node',
        async () => {
          for (const server of cluster.servers) {
            if (!(await redisCli(server.port, 'cluster', 'info')).includes('cluster_state:ok')) return false;
          }
          return true;
        },
        30_000,
        200,
      );
    } catch (error) {
      await cluster.dispose();
      throw error;
    }
    return cluster;
  }

  /** REDIS_CLUSTER_NODES: every node (a client finds the rest from any one of them). */
  get nodes(): string {
    return this.servers.map((server) => `127.0.0.1:${server.port}`).join(',');
  }

  /** The port of the master serving `key`'s slot now, as a live node sees it (undefined: none, mid-failover). */
  async masterOf(key: string): Promise<number | undefined> {
    const slot = Number(await redisCli(this.alivePort(), 'cluster', 'keyslot', key));
    const nodes = await redisCli(this.alivePort(), 'cluster', 'nodes');
    for (const line of nodes.split('\n')) {
      const [, address, flags, , , , , state, ...ranges] = line.split(' ');
      if (!flags.includes('master') || flags.includes('fail') || state !== 'connected') continue;
      for (const range of ranges) {
        const [from, to = from] = range.split('-').map(Number);
        if (slot >= from && slot <= to) return Number(address.split('@')[0].split(':')[1]);
      }
    }
    return undefined;
  }

  private alivePort(): number {
    const alive = this.servers.find((server) => server.child.exitCode === null && server.child.signalCode === null);
    if (!alive) throw new Error('every node of the private cluster is down');
    return alive.port;
  }
}

/**
 * A master, its replica, and three sentinels (quorum 2) that judge it down after 1 s. With
 * `sentinelPassword` the sentinels require it (`requirepass`) of every client, one another included
 * (`sentinel sentinel-pass`).
 */
export class PrivateSentinels extends PrivateDeployment {
  static readonly MASTER_NAME = 'mjtestmaster';
  master = 0;
  replica = 0;
  sentinels: number[] = [];
  private sentinelPassword: string | undefined;

  static async start(options: { sentinelPassword?: string } = {}): Promise<PrivateSentinels> {
    const deployment = new PrivateSentinels(await mkdtemp(join(tmpdir(), 'mj-redis-sentinel-')));
    const password = options.sentinelPassword;
    deployment.sentinelPassword = password;
    try {
      const plain = ['save ""', 'appendonly no'];
      deployment.master = (await deployment.startServer('redis-server', 'master', plain)).port;
      deployment.replica = (
        await deployment.startServer('redis-server', 'replica', [...plain, `replicaof 127.0.0.1 ${deployment.master}`])
      ).port;
      await pollUntil(
        'the replica to be in sync',
        async () => (await redisCli(deployment.replica, 'info', 'replication')).includes('master_link_status:up'),
        20_000,
        100,
      );
      for (let i = 0; i < 3; i++) {
        const sentinel = await deployment.startServer(
          'redis-sentinel',
          `sentinel${i}`,
          [
            `sentinel monitor ${PrivateSentinels.MASTER_NAME} 127.0.0.1 ${deployment.master} 2`,
            `sentinel down-after-milliseconds ${PrivateSentinels.MASTER_NAME} 1000`,
            `sentinel failover-timeout ${PrivateSentinels.MASTER_NAME} 5000`,
            `sentinel parallel-syncs ${PrivateSentinels.MASTER_NAME} 1`,
            ...(password === undefined ? [] : [`requirepass "${password}"`, `sentinel sentinel-pass "${password}"`]),
          ],
          password,
        );
        deployment.sentinels.push(sentinel.port);
      }
      // Each sentinel has found the replica and the other sentinels (through the master's hello channel).
      await pollUntil(
        'the sentinels to know each other and the replica',
        async () => {
          for (const port of deployment.sentinels) {
            const info = await deployment.sentinelCli(port, 'sentinel', 'master', PrivateSentinels.MASTER_NAME);
            const lines = info.split('\n');
            const field = (name: string) => Number(lines[lines.indexOf(name) + 1]);
            if (field('num-other-sentinels') !== 2 || field('num-slaves') !== 1) return false;
          }
          return true;
        },
        30_000,
        200,
      );
    } catch (error) {
      await deployment.dispose();
      throw error;
    }
    return deployment;
  }

  /** REDIS_SENTINELS */
  get sentinelList(): string {
    return this.sentinels.map((port) => `127.0.0.1:${port}`).join(',');
  }

  /** The master's port as the first live sentinel names it. */
  async currentMaster(): Promise<number> {
    const reply = await this.sentinelCli(
      this.sentinels[0],
      'sentinel',
      'get-master-addr-by-name',
      PrivateSentinels.MASTER_NAME,
    );
    return Number(reply.split('\n')[1]);
  }

  /** redis-cli against the sentinel on `port`, with the sentinels' password if they require one. */
  sentinelCli(port: number, ...args: string[]): Promise<string> {
    return redisCliAs(this.sentinelPassword, port, args);
  }
}
