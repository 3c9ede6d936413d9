// Configuration from the environment (docs/api-decisions.md §10), parsed and validated once at start-up.
// A bad value stops the process with a message naming the variable and what is allowed. The settings'
// type is app-config.ts; storage, metrics and the dashboard are checked in their own files.
import { compile as compileTrust } from '@fastify/proxy-addr';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { createAddressPolicy, loopbackEntriesWithoutPort, loopbackNamesWithoutPort } from '../net/address-policy';
import { parseSigningKey } from '../crypto/ed25519-private-key';
import type { AppConfig, DatabasePoolMode } from './app-config';
import { ConfigError, int, list, url, type Env } from './env-values';
import { keyPrefix, parseRedisTopology, RedisConfigError, type RedisTopology } from './redis-config';
import { dashboardConfig, metricsConfig } from './service-configs';
import { storageConfig } from './storage-config';

export { APP_CONFIG, type AppConfig, type DatabasePoolMode } from './app-config';
export { ConfigError } from './env-values';

function databasePoolMode(env: Env): DatabasePoolMode {
  const mode = env.DATABASE_POOL_MODE || 'session';
  if (mode !== 'session' && mode !== 'transaction')
    throw new ConfigError(`DATABASE_POOL_MODE must be session or transaction; got "${mode}".`);
  return mode;
}

/** Reads `.env` in the working directory (written by `npm run dev` on a first run); real env vars win. */
export function loadDotEnv(dir = process.cwd()): void {
  const file = resolve(dir, '.env');
  if (process.env.NODE_ENV !== 'test' && existsSync(file)) process.loadEnvFile(file);
}

export function parseConfig(env: Env = process.env): AppConfig {
  const nodeEnv = env.NODE_ENV ?? 'development';
  const port = int(env, 'PORT', 3000, 0, 65535);
  const publicBaseUrl = url(env, 'PUBLIC_BASE_URL', `http://127.0.0.1:${port}`, ['http:', 'https:']);
  const adminToken = env.ADMIN_TOKEN || null;
  if (adminToken !== null && adminToken.length < 16)
    throw new ConfigError('ADMIN_TOKEN must be at least 16 characters.');
  const schedule = list(env, 'WEBHOOK_RETRY_SCHEDULE');
  const webhookRetryScheduleSeconds = schedule.length
    ? schedule.map((part) => {
        if (!/^\d+$/.test(part))
          throw new ConfigError(`WEBHOOK_RETRY_SCHEDULE must be comma-separated whole seconds; got "${part}".`);
        return Number(part);
      })
    : [0, 5, 300, 1800, 7200, 18000, 36000, 36000];
  const assetUrlSecret =
    env.ASSET_URL_SECRET || (nodeEnv === 'production' ? '' : 'dev-only-asset-url-secret-change-me');
  if (assetUrlSecret.length < 16)
    throw new ConfigError('ASSET_URL_SECRET must be set to at least 16 characters in production.');
  if (nodeEnv === 'production' && !adminToken) throw new ConfigError('ADMIN_TOKEN must be set in production.');
  const region = env.REGION || 'local';
  if (!/^[a-z0-9-]{1,32}$/.test(region))
    throw new ConfigError(`REGION must be 1-32 characters of a-z, 0-9 and "-"; got "${region}".`);
  const maxConcurrentProbes = int(env, 'MAX_CONCURRENT_PROBES', 16, 1, 1000);
  const prefix = env.REDIS_PREFIX || 'mj';
  if (!/^[A-Za-z0-9_-]{1,40}$/.test(prefix))
    throw new ConfigError('REDIS_PREFIX must be 1-40 characters of A-Z, a-z, 0-9, _ and -.');
  const redisUrl = url(env, 'REDIS_URL', 'redis://127.0.0.1:6379', ['redis:', 'rediss:']);
  const redisTopology = redisTopologyOf(env, redisUrl);
  const redisPrefix = keyPrefix(prefix, redisTopology);
  const logLevel = env.LOG_LEVEL || (nodeEnv === 'test' ? 'silent' : 'info');
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(logLevel)) {
    throw new ConfigError(
      `LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent; got "${logLevel}".`,
    );
  }
  const logFormat = env.LOG_FORMAT || (nodeEnv !== 'production' && process.stdout.isTTY ? 'pretty' : 'json');
  if (logFormat !== 'json' && logFormat !== 'pretty')
    throw new ConfigError(`LOG_FORMAT must be json or pretty; got "${logFormat}".`);
  const metrics = metricsConfig(env, nodeEnv);
  const allowPrivateUrls = list(env, 'ALLOW_PRIVATE_URLS');
  try {
    createAddressPolicy(allowPrivateUrls);
  } catch (error) {
    throw new ConfigError(
      `ALLOW_PRIVATE_URLS must list IP addresses, CIDRs or host names, each optionally with :port: ${(error as Error).message}`,
    );
  }
  // A port-less loopback entry lets a customer's URL reach this host's Redis and PostgreSQL: production
  // must name the one port it means (docs/configuration.md).
  const openLoopback = nodeEnv === 'production' ? loopbackEntriesWithoutPort(allowPrivateUrls) : [];
  if (openLoopback.length > 0) {
    throw new ConfigError(
      `ALLOW_PRIVATE_URLS: "${openLoopback[0]}" opens every port of this host (Redis, PostgreSQL); in production name the port, e.g. 127.0.0.1:8080.`,
    );
  }
  const dashboard = dashboardConfig(env, publicBaseUrl);
  const trustProxy = list(env, 'TRUST_PROXY');
  for (const entry of trustProxy) {
    try {
      // Fastify's own parser of trustProxy, so what passes here is exactly what it will trust.
      compileTrust(entry);
    } catch {
      throw new ConfigError(
        `TRUST_PROXY must list proxy addresses or CIDRs (comma-separated, e.g. 10.0.0.0/8,::1); got "${entry}".`,
      );
    }
  }
  return {
    nodeEnv,
    port,
    databaseUrl: url(env, 'DATABASE_URL', 'postgres://postgres@127.0.0.1:5432/mediajobs', ['postgres:', 'postgresql:']),
    databasePoolMode: databasePoolMode(env),
    redisUrl,
    redisTopology,
    redisPrefix,
    adminToken,
    publicBaseUrl,
    docsUrl: url(env, 'DOCS_URL', `${publicBaseUrl}/docs`, ['http:', 'https:']),
    storageDir: resolve(env.STORAGE_DIR || './storage'),
    storage: storageConfig(env),
    storageSweepAfterSeconds: int(env, 'STORAGE_SWEEP_AFTER_SECONDS', 6 * 3600, 1, 30 * 86400),
    allowPrivateUrls,
    workerConcurrency: int(env, 'WORKER_CONCURRENCY', 1, 1, 64),
    segmentSeconds: int(env, 'SEGMENT_SECONDS', 60, 0, 86_400),
    jobTimeLimitSeconds: int(env, 'JOB_TIME_LIMIT_SECONDS', 3600, 1, 86400),
    cancelWindowSeconds: int(env, 'CANCEL_WINDOW_SECONDS', 60, 0, 86400),
    maxUploadBytes: int(env, 'MAX_UPLOAD_BYTES', 2 * 1024 ** 3, 1),
    maxSourceBytes: int(env, 'MAX_SOURCE_BYTES', 2 * 1024 ** 3, 1),
    sourceMinBytesPerSecond: int(env, 'SOURCE_MIN_BYTES_PER_SECOND', 16 * 1024, 0),
    maxJsonBodyBytes: int(env, 'MAX_JSON_BODY_BYTES', 1024 * 1024, 1024),
    requestBodyMinBytesPerSecond: int(env, 'REQUEST_BODY_MIN_BYTES_PER_SECOND', 1024, 1, 1024 ** 3),
    requestBodyRateWindowSeconds: int(env, 'REQUEST_BODY_RATE_WINDOW_SECONDS', 10, 1, 600),
    shutdownGraceSeconds: int(env, 'SHUTDOWN_GRACE_SECONDS', 20, 0, 3600),
    maxDurationSeconds: int(env, 'MAX_DURATION_SECONDS', 3600, 1),
    maxConcurrentProbes,
    maxProbesPerAccount: int(
      env,
      'MAX_PROBES_PER_ACCOUNT',
      Math.max(1, Math.floor(maxConcurrentProbes / 4)),
      1,
      maxConcurrentProbes,
    ),
    probeRequestSeconds: int(env, 'PROBE_REQUEST_SECONDS', 30, 1, 600),
    jobRetentionDays: int(env, 'JOB_RETENTION_DAYS', 30, 1, 3650),
    upkeepBatchSize: int(env, 'UPKEEP_BATCH_SIZE', 1000, 1, 100_000),
    upkeepBatchPauseMs: int(env, 'UPKEEP_BATCH_PAUSE_MS', 100, 0, 60_000),
    webhookRetryScheduleSeconds,
    region,
    workerMaxPixels: int(env, 'WORKER_MAX_PIXELS', 3840 * 2160, 1),
    workerLockMs: int(env, 'WORKER_LOCK_MS', 30_000, 1000, 600_000),
    workerReconcileMs: int(env, 'WORKER_RECONCILE_MS', 15_000, 1000, 3_600_000),
    workerStaleJobSeconds: int(env, 'WORKER_STALE_JOB_SECONDS', 60, 1, 86_400),
    maxQueueDepth: int(env, 'MAX_QUEUE_DEPTH', 10000, 1),
    ipRateLimitPerSecond: int(env, 'IP_RATE_LIMIT', 20, 1),
    playbackRateLimitPerSecond: int(env, 'PLAYBACK_RATE_LIMIT', 200, 1),
    trustProxy,
    licenseRateLimitPerSecond: int(env, 'LICENSE_RATE_LIMIT', 10, 1),
    logLevel,
    logFormat,
    ...metrics,
    ffmpegPath: env.FFMPEG_PATH || 'ffmpeg',
    ffprobePath: env.FFPROBE_PATH || 'ffprobe',
    assetUrlSecret,
    licenseSigningKey: licenseSigningKey(env),
    ...dashboard,
    billingTopupUrl: topupUrl(env, nodeEnv),
  };
}

/** Shown to customers (billing page, insufficient_credits): https only in production, where a link must not be sniffable. */
function topupUrl(env: Env, nodeEnv: string): string | null {
  if (!env.BILLING_TOPUP_URL) return null;
  const protocols = nodeEnv === 'production' ? ['https:'] : ['https:', 'http:'];
  return url(env, 'BILLING_TOPUP_URL', '', protocols);
}

/** LICENSE_SIGNING_KEY when set, checked here so that a bad one stops start-up like any other setting. */
function licenseSigningKey(env: Env): string | null {
  const value = env.LICENSE_SIGNING_KEY || null;
  if (value === null) return null;
  try {
    parseSigningKey(value);
  } catch (error) {
    throw new ConfigError(
      `LICENSE_SIGNING_KEY must be base64 of a PKCS#8 DER Ed25519 private key: ${(error as Error).message}.`,
    );
  }
  return value;
}

/**
 * What the API process needs beyond every process's settings (createHttpApp checks it first): in
 * production a licence signing key, since tokens signed with a key made at start-up die with the process.
 */
export function checkApiConfig(config: AppConfig): void {
  if (config.nodeEnv === 'production' && !config.licenseSigningKey) {
    throw new ConfigError(
      'LICENSE_SIGNING_KEY must be set in production (base64 of a PKCS#8 DER Ed25519 private key); ' +
        'without it licence tokens could not be verified after a restart.',
    );
  }
}

/** Where Redis is (REDIS_CLUSTER_NODES, REDIS_SENTINELS: redis-config.ts); its refusals are ConfigErrors too. */
function redisTopologyOf(env: Env, redisUrl: string): RedisTopology {
  try {
    return parseRedisTopology(env, redisUrl);
  } catch (error) {
    if (error instanceof RedisConfigError) throw new ConfigError(error.message);
    throw error;
  }
}

/**
 * The checks parseConfig cannot make synchronously: in production, a port-less ALLOW_PRIVATE_URLS name
 * must not resolve to this host (`vm` in /etc/hosts, `ip6-localhost`), refused like a bare 127.0.0.1.
 */
export async function checkConfigNames(config: AppConfig): Promise<void> {
  if (config.nodeEnv !== 'production') return;
  const [openLoopback] = await loopbackNamesWithoutPort(config.allowPrivateUrls);
  if (openLoopback) {
    throw new ConfigError(
      `ALLOW_PRIVATE_URLS: "${openLoopback}" resolves to this host (loopback) and so opens every port of it (Redis, PostgreSQL); in production name the port, e.g. ${openLoopback}:8080.`,
    );
  }
}

/** Parses the configuration or exits with a clear message: a service must not start half-configured. */
export async function loadConfigOrExit(): Promise<AppConfig> {
  loadDotEnv();
  try {
    const config = parseConfig();
    await checkConfigNames(config);
    return config;
  } catch (error) {
    exitOnConfigError(error);
    throw error;
  }
}

/** A ConfigError ends the process with its one line and exit code 78 (EX_CONFIG); anything else returns. */
export function exitOnConfigError(error: unknown): void {
  if (!(error instanceof ConfigError)) return;
  process.stderr.write(`Configuration error: ${error.message}\n`);
  process.exit(78);
}
