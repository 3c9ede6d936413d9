// The baseline of the job-read benchmark: bare Fastify and `pg`, no framework, no auth, no rate
// limit, running the same single indexed SELECT our GET /v1/sdr2hdr/jobs/{id} runs for the job.
import Fastify from 'fastify';
import { serve } from './serve';
import { Pool } from 'pg';
import { JOB_COLUMNS } from '../../src/jobs/job.types';

const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const app = Fastify({ logger: false });

app.get<{ Params: { id: string }; Headers: { 'x-account-id'?: string } }>(
  '/v1/sdr2hdr/jobs/:id',
  async (request, reply) => {
    const { rows } = await pool.query(
      `SELECT ${JOB_COLUMNS} FROM jobs WHERE id = $1 AND account_id = $2
        AND (finished_at IS NULL OR finished_at > now() - make_interval(days => $3))`,
      [request.params.id, request.headers['x-account-id'], 30],
    );
    if (!rows[0]) return reply.code(404).send({ error: 'not found' });
    return rows[0];
  },
);
serve(app, () => pool.end());
