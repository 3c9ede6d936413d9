// Jobs past retention, as years of use leave them, written by SQL generate_series (a million in
// minutes): each finished JOB_RETENTION_DAYS + a day or more ago, with two items, its output asset
// (already expired and marked deleted, as the hourly purge leaves it), its terminal event (dispatched)
// with one delivered webhook delivery and its attempt. Used by the retention tests and bench/purge.ts.

export type Query = (sql: string, params?: unknown[]) => Promise<unknown>;

export interface ExpiredSeed {
  accountId: string;
  /** Distinguishes the ids of one seeding from another's in the same database. */
  tag: string;
  count: number;
  /** Jobs per statement: a million rows in one INSERT would hold one long transaction. */
  chunk?: number;
}

/** A webhook endpoint of the account for the seeded deliveries (the purge never reads it). */
export async function seedEndpoint(query: Query, accountId: string, tag: string): Promise<string> {
  const id = `we_expired${tag}`;
  await query(
    `INSERT INTO webhook_endpoints (id, account_id, url, events, secret)
     VALUES ($1, $2, 'https://hooks.example.com/mediajobs', '{job.succeeded}', 'whsec_seeded')
     ON CONFLICT (id) DO NOTHING`,
    [id, accountId],
  );
  return id;
}

/** Writes `count` expired jobs with their items, asset, event, delivery and attempt. */
export async function seedExpiredJobs(query: Query, seed: ExpiredSeed): Promise<void> {
  const endpointId = await seedEndpoint(query, seed.accountId, seed.tag);
  const chunk = seed.chunk ?? 50_000;
  for (let from = 1; from <= seed.count; from += chunk) {
    const to = Math.min(seed.count, from + chunk - 1);
    // $1 account, $2 tag, $3 first, $4 last ($5 endpoint, for the deliveries). g spreads the jobs over the 400 days past retention.
    const params = [seed.accountId, seed.tag, from, to];
    const jobs = `SELECT g, 'job_x' || $2 || '_' || g AS id, $1::text AS account_id,
                         now() - interval '31 days' - (g % 400) * interval '1 day' - (g % 86400) * interval '1 second' AS ended
                    FROM generate_series($3::int, $4::int) g`;
    await query(
      `INSERT INTO jobs (id, account_id, api, status, region, output_options, estimated_credits, charged_credits,
                         billing_state, estimated_seconds, processed_seconds, progress, request_id, attempts,
                         created_at, started_at, finished_at, heartbeat_at)
       SELECT id, $1, 'sdr2hdr', 'succeeded', 'expired', '{"resolution":"source"}', 20, 20, 'settled', 2, 2, 1,
              'req_seeded', 1, ended - interval '2 minutes', ended - interval '1 minute', ended, ended
         FROM (${jobs}) j`,
      params,
    );
    await query(
      `INSERT INTO job_items (job_id, index, status, source, duration_seconds, width, height, estimated_credits,
                              charged_credits, processed_seconds, output)
       SELECT j.id, i, 'succeeded', '{"upload_id":"upl_seeded"}', 1, 320, 180, 10, 10, 1, '{"asset_id":"ast_seeded"}'
         FROM (${jobs}) j CROSS JOIN generate_series(0, 1) i`,
      params,
    );
    await query(
      `INSERT INTO assets (id, account_id, job_id, item_index, storage_key, size_bytes, container, content_type,
                           created_at, expires_at, deleted_at)
       SELECT 'ast_x' || $2 || '_' || g, $1, j.id, 0, 'outputs/' || $1 || '/' || j.id || '/0.mp4', 100000, 'mp4',
              'video/mp4', ended, ended + interval '7 days', ended + interval '7 days'
         FROM (${jobs}) j`,
      params,
    );
    await query(
      `INSERT INTO outbox_events (id, account_id, job_id, event, payload, created_at, dispatched_at)
       SELECT 'evt_x' || $2 || '_' || g, $1, j.id, 'job.succeeded', '{"type":"job.succeeded"}', ended, ended
         FROM (${jobs}) j`,
      params,
    );
    await query(
      `INSERT INTO webhook_deliveries (id, event_id, endpoint_id, origin, state, attempts, created_at, finished_at)
       SELECT 'dlv_x' || $2 || '_' || g, 'evt_x' || $2 || '_' || g, $5, 'outbox', 'delivered', 1, ended, ended
         FROM (${jobs}) j`,
      [...params, endpointId],
    );
    await query(
      `INSERT INTO webhook_attempts (delivery_id, attempt, attempted_at, status_code, duration_ms)
       SELECT 'dlv_x' || $2 || '_' || g, 1, ended, 200, 40 FROM (${jobs}) j`,
      params,
    );
  }
}

/** How many of the seeded jobs (and of their events) are still there. */
export async function seededLeft(
  query: <T>(sql: string, params?: unknown[]) => Promise<T[]>,
  tag: string,
): Promise<{ jobs: number; events: number }> {
  const [left] = await query<{ jobs: number; events: number }>(
    `SELECT (SELECT count(*) FROM jobs WHERE id LIKE 'job\\_x' || $1 || '\\_%')::int AS jobs,
            (SELECT count(*) FROM outbox_events WHERE id LIKE 'evt\\_x' || $1 || '\\_%')::int AS events`,
    [tag],
  );
  return left;
}
