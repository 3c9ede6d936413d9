// The configuration every module is given (APP_CONFIG): what parseConfig (config.ts) makes of the
// environment, each setting already checked and defaulted.
import type { S3Settings } from '../storage/s3-client';
import type { RedisTopology } from './redis-config';

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
   * Requests per second per client address on the playback routes (/v1/playback/…), counted apart from
   * IP_RATE_LIMIT: a player fetches a package's playlists and segments in bursts (docs/configuration.md).
   */
  playbackRateLimitPerSecond: number;
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

export type DatabasePoolMode = 'session' | 'transaction';

export const APP_CONFIG = Symbol('APP_CONFIG');
