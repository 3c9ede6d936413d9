// Configuration from the environment (docs/api-decisions.md §10), parsed and validated once at start-up.
// A bad value stops the process with a message naming the variable and what is allowed.
import { compile as compileTrust } from '@fastify/proxy-addr';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { createAddressPolicy, loopbackEntriesWithoutPort, loopbackNamesWithoutPort } from '../net/address-policy';
import type { S3Settings } from '../storage/s3-client';
import { parseSigningKey } from '../crypto/ed25519-private-key';
import { keyPrefix, parseRedisTopology, RedisConfigError, type RedisTopology } from './redis-config';

export interface AppConfig {
  nodeEnv: string;
  port: number;
  databaseUrl: string;
  /**
   * How the server behind DATABASE_URL pools connections: `session` (PostgreSQL itself, or a pooler in
   * session mode) or `transaction` (PgBouncer's pool_mode=transaction, where consecutive transactions of
   * one client connection may run on different server connections): then nothing may outlive a
   * transaction on a connection — no named prepared statements, no session settings (src/common/database/pool-mode.ts).
   */
  databasePoolMode: DatabasePoolMode;
  redisUrl: string;
  /** One node (REDIS_URL), a cluster (REDIS_CLUSTER_NODES) or sentinels (REDIS_SENTINELS): redis-config.ts. */
  redisTopology: RedisTopology;
  /**
   * Prefix of every Redis key and BullMQ queue (REDIS_PREFIX), so test runs never meet a developer's run;
   * on a cluster a hash tag, `{mj}` (redis-config.ts keyPrefix).
   */
  redisPrefix: string;
  adminToken: string | null;
  publicBaseUrl: string;
  docsUrl: string;
  storageDir: string;
  /** STORAGE_BACKEND: the local folder (STORAGE_DIR) or S3-compatible object storage (S3_*). */
  storage: { backend: 'local' } | ({ backend: 's3' } & S3Settings);
  /** Unfinished uploads and orphaned outputs older than this are removed by the worker's sweeper. */
  storageSweepAfterSeconds: number;
  allowPrivateUrls: string[];
  workerConcurrency: number;
  /**
   * Segment-parallel encoding: target length of a segment; an sdr2hdr input at least twice this long
   * is split at keyframes and its segments are encoded by any worker of the region (0: never split).
   */
  segmentSeconds: number;
  jobTimeLimitSeconds: number;
  cancelWindowSeconds: number;
  maxUploadBytes: number;
  /** Largest source_url download: refused at submit when the source announces its size, else in the worker. */
  maxSourceBytes: number;
  /** Slowest a source_url download may arrive, over each SOURCE_RATE_WINDOW_MS (0: no minimum). */
  sourceMinBytesPerSecond: number;
  maxJsonBodyBytes: number;
  /** A request body slower than this over a whole window is answered 408 request_timeout and dropped. */
  requestBodyMinBytesPerSecond: number;
  requestBodyRateWindowSeconds: number;
  /** On stop, how long a request under way may take before its connection is closed (src/common/http/shutdown-grace.ts). */
  shutdownGraceSeconds: number;
  maxDurationSeconds: number;
  /** ffprobe processes one API instance runs at once for submits; a submit that waits too long is a 503. */
  maxConcurrentProbes: number;
  /** Of those, what one account may run at once (default: a quarter of them, at least 1). */
  maxProbesPerAccount: number;
  /** The longest one request's sources may take to inspect, all inputs together (then a 503). */
  probeRequestSeconds: number;
  jobRetentionDays: number;
  /**
   * The worker's upkeep (retention purge, webhook event purge, storage sweeper) works in batches of
   * this many rows or objects, each its own short transaction, so no statement runs long or holds many locks.
   */
  upkeepBatchSize: number;
  /** The least pause between two upkeep batches (each pause is at least as long as the batch before it). */
  upkeepBatchPauseMs: number;
  webhookRetryScheduleSeconds: number[];
  region: string;
  workerMaxPixels: number;
  /** BullMQ lock of a running job: a worker that dies is noticed after about this long. */
  workerLockMs: number;
  /** How often a worker's reconciler looks for open jobs the queue lost. */
  workerReconcileMs: number;
  /** An open job untouched this long is checked against the queue by the reconciler. */
  workerStaleJobSeconds: number;
  maxQueueDepth: number;
  ipRateLimitPerSecond: number;
  /**
   * TRUST_PROXY: the reverse proxies (addresses, CIDRs, or proxy-addr's `loopback`, `linklocal`,
   * `uniquelocal`) whose X-Forwarded-For is believed; empty = none. The client address it yields is
   * what every per-IP limit counts and what /metrics' loopback rule judges.
   */
  trustProxy: string[];
  /** Requests per second per licence key (and per licence, for token reads) on /v1/license/*. */
  licenseRateLimitPerSecond: number;
  logLevel: string;
  /** `pretty` (readable lines, for a terminal) or `json`; default pretty only on a TTY outside production. */
  logFormat: 'json' | 'pretty';
  /** When set, `/metrics` (API and workers) requires `Authorization: Bearer <token>`. */
  metricsToken: string | null;
  /** The worker's own `GET /metrics` port; null = off. */
  workerMetricsPort: number | null;
  workerMetricsHost: string;
  ffmpegPath: string;
  ffprobePath: string;
  assetUrlSecret: string;
  licenseSigningKey: string | null;
  /** Dashboard: outgoing mail (set-password, invitation and reset links); null sends none. */
  smtpUrl: string | null;
  mailFrom: string;
  /** Dashboard sessions end after this long without a request, and this long after sign-in at the latest. */
  sessionIdleTimeoutSeconds: number;
  sessionAbsoluteTimeoutSeconds: number;
  /** Failed sign-ins allowed per minute, per IP and per email; the next one is rate_limit_exceeded. */
  signInAttemptsPerMinute: number;
  /** The built dashboard (index.html and assets/), served under /dashboard. */
  dashboardDir: string;
  /** BILLING_TOPUP_URL: the operator's page where customers buy credits; null: none (credits come from the operator). */
  billingTopupUrl: string | null;
}

export class ConfigError extends Error {}

export type DatabasePoolMode = 'session' | 'transaction';

type Env = Record<string, string | undefined>;

function int(env: Env, name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^-?\d+$/.test(raw.trim()))
    throw new ConfigError(`${name} must be a whole number between ${min} and ${max}; got "${raw}".`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}; got ${value}.`);
  return value;
}

function url(env: Env, name: string, fallback: string, protocols: string[]): string {
  const raw = env[name] || fallback;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be a URL (${protocols.join(', ')}); got "${raw}".`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(`${name} must use one of ${protocols.join(', ')}; got "${parsed.protocol}".`);
  }
  return raw.replace(/\/+$/, '');
}

function databasePoolMode(env: Env): DatabasePoolMode {
  const mode = env.DATABASE_POOL_MODE || 'session';
  if (mode !== 'session' && mode !== 'transaction')
    throw new ConfigError(`DATABASE_POOL_MODE must be session or transaction; got "${mode}".`);
  return mode;
}

function list(env: Env, name: string): string[] {
  return (env[name] ?? '')
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);
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

/** STORAGE_BACKEND and, for s3, the bucket and how to reach it (docs/api-decisions.md §11). */
function redisTopologyOf(env: Env, redisUrl: string): RedisTopology {
  try {
    return parseRedisTopology(env, redisUrl);
  } catch (error) {
    if (error instanceof RedisConfigError) throw new ConfigError(error.message);
    throw error;
  }
}

function storageConfig(env: Env): AppConfig['storage'] {
  const backend = env.STORAGE_BACKEND || 'local';
  if (backend === 'local') return { backend };
  if (backend !== 's3') throw new ConfigError(`STORAGE_BACKEND must be local or s3; got "${backend}".`);
  const bucket = env.S3_BUCKET ?? '';
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket))
    throw new ConfigError(
      `S3_BUCKET must be set to a bucket name (3-63 characters of a-z, 0-9, "." and "-") when STORAGE_BACKEND=s3; got "${bucket}".`,
    );
  let prefix = (env.S3_PREFIX ?? '').trim();
  if (prefix.startsWith('/') || prefix.includes('..'))
    throw new ConfigError(`S3_PREFIX must not start with "/" or contain ".."; got "${prefix}".`);
  if (prefix && !prefix.endsWith('/')) prefix += '/';
  const endpoint = env.S3_ENDPOINT ? url(env, 'S3_ENDPOINT', '', ['http:', 'https:']) : null;
  const region = env.S3_REGION || 'us-east-1';
  if (!/^[a-z0-9-]{1,40}$/.test(region))
    throw new ConfigError(`S3_REGION must be a region name such as us-east-1; got "${region}".`);
  const pathStyle = env.S3_FORCE_PATH_STYLE || (endpoint ? 'true' : 'false');
  if (pathStyle !== 'true' && pathStyle !== 'false')
    throw new ConfigError(`S3_FORCE_PATH_STYLE must be true or false; got "${pathStyle}".`);
  const accessKeyId = env.AWS_ACCESS_KEY_ID || '';
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY || '';
  if (Boolean(accessKeyId) !== Boolean(secretAccessKey))
    throw new ConfigError(
      'AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set together (or neither, for the SDK default chain).',
    );
  return {
    backend,
    bucket,
    prefix,
    endpoint,
    region,
    forcePathStyle: pathStyle === 'true',
    credentials: accessKeyId ? { accessKeyId, secretAccessKey } : null,
  };
}

const LOOPBACK_HOSTS = ['127.0.0.1', '::1', 'localhost'];

/**
 * Metrics: an optional bearer token for `/metrics`, and the worker's own metrics port. In production
 * without a token, metrics stay on loopback: the worker may not bind elsewhere (and the API answers
 * only loopback clients, see metrics-access.ts).
 */
function metricsConfig(
  env: Env,
  nodeEnv: string,
): Pick<AppConfig, 'metricsToken' | 'workerMetricsPort' | 'workerMetricsHost'> {
  const metricsToken = env.METRICS_TOKEN || null;
  if (metricsToken !== null && metricsToken.length < 16)
    throw new ConfigError('METRICS_TOKEN must be at least 16 characters.');
  const port = env.WORKER_METRICS_PORT ? int(env, 'WORKER_METRICS_PORT', 0, 0, 65535) : null;
  const host = env.WORKER_METRICS_HOST || '127.0.0.1';
  if (nodeEnv === 'production' && port !== null && !metricsToken && !LOOPBACK_HOSTS.includes(host))
    throw new ConfigError(
      `WORKER_METRICS_HOST=${host} exposes metrics beyond loopback: set METRICS_TOKEN too (production).`,
    );
  return { metricsToken, workerMetricsPort: port, workerMetricsHost: host };
}

/** The dashboard's settings: mail, sessions, sign-in limits and where the built app is. */
function dashboardConfig(
  env: Env,
  publicBaseUrl: string,
): Pick<
  AppConfig,
  | 'smtpUrl'
  | 'mailFrom'
  | 'sessionIdleTimeoutSeconds'
  | 'sessionAbsoluteTimeoutSeconds'
  | 'signInAttemptsPerMinute'
  | 'dashboardDir'
> {
  const smtpUrl = env.SMTP_URL ? url(env, 'SMTP_URL', '', ['smtp:', 'smtps:']) : null;
  const mailFrom = env.MAIL_FROM || `mediajobs <no-reply@${new URL(publicBaseUrl).hostname}>`;
  // A bare address or "Name <address>": what nodemailer and every SMTP server accept as From.
  if (!/^(?:[^<>@\r\n]+ <[^<>@\s]+@[^<>@\s]+>|[^<>@\s]+@[^<>@\s]+)$/.test(mailFrom))
    throw new ConfigError(`MAIL_FROM must be an email address or "Name <address>"; got "${mailFrom}".`);
  const sessionIdleTimeoutSeconds = int(env, 'SESSION_IDLE_TIMEOUT_SECONDS', 7200, 60, 30 * 86400);
  const sessionAbsoluteTimeoutSeconds = int(env, 'SESSION_ABSOLUTE_TIMEOUT_SECONDS', 86400, 60, 90 * 86400);
  if (sessionAbsoluteTimeoutSeconds < sessionIdleTimeoutSeconds)
    throw new ConfigError('SESSION_ABSOLUTE_TIMEOUT_SECONDS must be at least SESSION_IDLE_TIMEOUT_SECONDS.');
  return {
    smtpUrl,
    mailFrom,
    sessionIdleTimeoutSeconds,
    sessionAbsoluteTimeoutSeconds,
    signInAttemptsPerMinute: int(env, 'SIGN_IN_ATTEMPTS_PER_MINUTE', 10, 1, 1000),
    dashboardDir: resolve(env.DASHBOARD_DIR || './dashboard/dist'),
  };
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

export const APP_CONFIG = Symbol('APP_CONFIG');
