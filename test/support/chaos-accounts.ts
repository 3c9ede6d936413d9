// Shared by the chaos and jobs suites: accounts on custom plans written straight into the test
// database, a hand-written worker heartbeat so a region counts as healthy without a worker, and
// small helpers to fire many requests at once and read what came back.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { DataSource } from 'typeorm';
import { AdminService } from '../../src/admin/admin.service';
import { CredentialsVersion } from '../../src/auth/credentials-version';
import { workersKey } from '../../src/queues/keys';
import type { JsonResponse, TestAccount, TestApi } from './app';

export interface PlanLimits {
  requestsPerSecond: number;
  concurrentJobs: number;
  /** null = unlimited (the enterprise default). */
  processingMinutesPerMonth?: number | null;
  apis?: ('sdr2hdr' | 'audio')[];
  maxOutputHeight?: number;
  usdPerCredit?: number;
  /** Webhook endpoints an account may hold (default 1000: the suites register as many as they like). */
  webhookEndpoints?: number;
  /** Bytes an account may hold in uploads (default 1 TiB). */
  uploadStorageBytes?: number;
}

/** Inserts a plan row with these limits (the plans table of docs/api-decisions.md §3) and returns its id. */
export async function createPlan(api: TestApi, limits: PlanLimits): Promise<string> {
  const id = `chaos_${randomBytes(6).toString('hex')}`;
  await api.app.get(DataSource).query(
    `INSERT INTO plans (id, requests_per_second, concurrent_jobs, processing_minutes_per_month, apis, max_output_height,
                        usd_per_credit, webhook_endpoints, upload_storage_bytes)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [
      id,
      limits.requestsPerSecond,
      limits.concurrentJobs,
      limits.processingMinutesPerMonth ?? null,
      limits.apis ?? ['sdr2hdr', 'audio'],
      limits.maxOutputHeight ?? 2160,
      limits.usdPerCredit ?? 0.005,
      limits.webhookEndpoints ?? 1000,
      limits.uploadStorageBytes ?? 2 ** 40,
    ],
  );
  return id;
}

/**
 * A fresh account on a plan of its own, with its first key (every scope) and optional credits.
 * API instances cache key lookups (with the account's plan) but drop them when the credentials
 * version in Redis moves; it is moved here as the admin API does on a plan change, so the new plan
 * applies from the very next request on every instance.
 */
export async function createAccountOnPlan(
  api: TestApi,
  limits: PlanLimits,
  options: { credits?: number; name?: string } = {},
): Promise<TestAccount & { planId: string }> {
  const planId = await createPlan(api, limits);
  const admin = api.app.get(AdminService);
  const { account, api_key } = await admin.createAccount(options.name ?? 'chaos account', 'pro');
  await api.app.get(DataSource).query('UPDATE accounts SET plan_id = $1 WHERE id = $2', [planId, account.id]);
  await api.app.get(CredentialsVersion).changed();
  if (options.credits) await admin.grantCredits(account.id, options.credits, 'chaos test grant');
  return { accountId: account.id, apiKey: api_key.key!, keyId: api_key.id, planId };
}

/**
 * Writes a worker heartbeat for `region` that stays fresh for an hour, so submits to it pass the
 * region-health check although no worker runs (jobs stay queued and keep their credit holds).
 */
export async function markRegionHealthy(api: TestApi, region: string): Promise<void> {
  const redis = new Redis(api.config.redisUrl);
  try {
    await redis.zadd(workersKey(api.config, region), Date.now() + 3600_000, `chaos-heartbeat-${region}`);
  } finally {
    redis.disconnect();
  }
}

/** Counts responses by status, e.g. `{ 202: 37, 402: 963 }`. */
export function countByStatus(responses: JsonResponse[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const response of responses) counts[response.status] = (counts[response.status] ?? 0) + 1;
  return counts;
}

/** Every page of a list endpoint (`{object:"list", data, has_more, next_cursor}`), followed to the end. */
export async function listAll(
  get: (query: string) => Promise<JsonResponse>,
  path: string,
  pageSize = 100,
): Promise<any[]> {
  const items: any[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 1000; page++) {
    const query = `${path}?limit=${pageSize}${cursor ? `&starting_after=${encodeURIComponent(cursor)}` : ''}`;
    const response = await get(query);
    if (response.status !== 200) throw new Error(`GET ${query}: ${response.status} ${JSON.stringify(response.body)}`);
    expect(response.body.object).toBe('list');
    items.push(...response.body.data);
    if (!response.body.has_more) return items;
    cursor = response.body.next_cursor;
  }
  throw new Error(`${path}: more than 1000 pages`);
}
