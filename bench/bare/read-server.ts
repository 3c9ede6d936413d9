// The baseline of the job-read benchmark: bare Fastify and `pg`, no framework, no auth, no rate
// limit, one query per read: the statement our GET /v1/sdr2hdr/jobs/{id} runs (the job and its
// items as one JSON value, the same retention rule), prepared once per connection as ours is, and
// the JSON value sent as it comes.
import Fastify from 'fastify';
import { serve } from './serve';
import { Pool } from 'pg';
import { JOB_JSON, retainedJob } from '../../src/jobs/job.types';

const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const app = Fastify({ logger: false });
const RETENTION_DAYS = 30;

app.get<{ Params: { id: string }; Headers: { 'x-account-id'?: string } }>(
  '/v1/sdr2hdr/jobs/:id',
  async (request, reply) => {
    const { rows } = await pool.query({
      name: 'job-for-account',
      text: `SELECT ${JOB_JSON} AS job FROM jobs WHERE id = $1 AND account_id = $2 AND ${retainedJob('$3')}`,
      values: [request.params.id, request.headers['x-account-id'], RETENTION_DAYS],
    });
    if (!rows[0]) return reply.code(404).send({ error: 'not found' });
    return rows[0].job;
  },
);
serve(app, () => pool.end());
