// The baseline of the submit benchmark: bare Fastify, `pg` and BullMQ doing what our submit must do
// at the least — the same SQL transaction (lock the account, reading its open jobs with it, take the
// credit hold with its ledger row, counting the job among the open ones, check the queue depth, insert
// the job and its item) and one BullMQ add
// with our job options (the only thing taken from our code). No auth, rate limit, idempotency,
// validation, source check or logging.
import { Queue } from 'bullmq';
import Fastify from 'fastify';
import { serve } from './serve';
import { randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import { PROCESS_JOB } from '../../src/queues/catalogue';
import { bullJobOptions } from '../../src/queues/drivers/bullmq.driver';

const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 20 });
const redisUrl = new URL(process.env.REDIS_URL!);
const region = process.env.REGION!;
/** The service's MAX_QUEUE_DEPTH in the same run: both count the region's queued jobs up to the same number. */
const maxQueueDepth = Number(process.env.MAX_QUEUE_DEPTH);
const queue = new Queue(`media.${region}`, {
  connection: { host: redisUrl.hostname, port: Number(redisUrl.port || 6379) },
  prefix: process.env.REDIS_PREFIX,
});
const app = Fastify({ logger: false });

interface Body {
  inputs: { upload_id: string }[];
}

app.post<{ Body: Body; Headers: { 'x-account-id'?: string } }>('/v1/sdr2hdr/jobs', async (request, reply) => {
  const accountId = request.headers['x-account-id']!;
  const uploadId = request.body.inputs[0].upload_id;
  const jobId = `job_${randomUUID().replace(/-/g, '')}`;
  const credits = 1;
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    // The account's open jobs come with its row; the hold counts the job among them.
    await client.query(
      'SELECT id, status, balance_credits, reserved_credits, open_jobs FROM accounts WHERE id = $1 FOR NO KEY UPDATE',
      [accountId],
    );
    const held = await client.query(
      `UPDATE accounts SET reserved_credits = reserved_credits + $2, open_jobs = open_jobs + 1, updated_at = now()
        WHERE id = $1 AND balance_credits - reserved_credits >= $2 RETURNING balance_credits, reserved_credits`,
      [accountId, credits],
    );
    await client.query(
      `INSERT INTO credit_ledger (id, account_id, kind, credits, job_id, balance_after, reserved_after)
       VALUES ($1, $2, 'authorise', $3, $4, $5, $6)`,
      [
        `led_${randomUUID().replace(/-/g, '')}`,
        accountId,
        credits,
        jobId,
        held.rows[0].balance_credits,
        held.rows[0].reserved_credits,
      ],
    );
    // The queue-depth check counts up to MAX_QUEUE_DEPTH, as the service's does.
    await client.query(
      `SELECT count(*) FROM (SELECT 1 FROM jobs WHERE status = 'queued' AND region = $1 LIMIT $2::int) queued`,
      [region, maxQueueDepth],
    );
    await client.query(
      `INSERT INTO jobs (id, account_id, api, status, region, output_options, metadata, estimated_credits, estimated_seconds, request_id)
       VALUES ($1, $2, 'sdr2hdr', 'queued', $3, '{}', '{}', $4, 1, $5)`,
      [jobId, accountId, region, credits, request.id],
    );
    await client.query(
      `INSERT INTO job_items (job_id, index, status, source, duration_seconds, width, height, estimated_credits)
       VALUES ($1, 0, 'queued', $2, 1, 320, 180, $3)`,
      [jobId, { type: 'upload', upload_id: uploadId }, credits],
    );
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  } finally {
    client.release();
  }
  const unit = { name: PROCESS_JOB, data: { jobId }, id: jobId };
  await queue.add(unit.name, unit.data, bullJobOptions('media', unit));
  return reply.code(202).send({ object: 'job', job_id: jobId, status: 'queued' });
});
serve(app, () => Promise.all([pool.end(), queue.close()]));
