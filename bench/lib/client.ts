// The HTTP calls a benchmark makes to set up what it measures, as a customer (or operator) would.
import { createReadStream } from 'node:fs';
import { request } from 'node:http';
import { stat } from 'node:fs/promises';
import { Redis } from 'ioredis';
import { BENCH_PLAN, type BenchEnvironment } from './environment';

export interface BenchAccount {
  accountId: string;
  apiKey: string;
}

async function json(response: Response, what: string): Promise<any> {
  const body = await response.json().catch(() => null);
  if (!response.ok) throw new Error(`${what}: HTTP ${response.status} ${JSON.stringify(body)}`);
  return body;
}

/** An account on the bench plan (no limit reached) with `credits` to spend. */
export async function createAccount(env: BenchEnvironment, apiUrl: string, credits: number): Promise<BenchAccount> {
  const admin = { 'content-type': 'application/json', 'x-admin-token': env.adminToken };
  const created = await json(
    await fetch(`${apiUrl}/v1/admin/accounts`, {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({ name: 'bench', plan: 'enterprise' }),
    }),
    'create account',
  );
  const accountId: string = created.account.id;
  await env.query('UPDATE accounts SET plan_id = $1 WHERE id = $2', [BENCH_PLAN, accountId]);
  if (credits > 0) {
    await json(
      await fetch(`${apiUrl}/v1/admin/accounts/${accountId}/credits`, {
        method: 'POST',
        headers: admin,
        body: JSON.stringify({ credits, reason: 'bench' }),
      }),
      'grant credits',
    );
  }
  return { accountId, apiKey: created.api_key.key };
}

/** Streams a local file to POST /v1/uploads and returns its upload id. */
export async function uploadFile(
  apiUrl: string,
  apiKey: string,
  path: string,
  contentType = 'video/mp4',
): Promise<string> {
  const { size } = await stat(path);
  const response = await fetch(`${apiUrl}/v1/uploads`, {
    method: 'POST',
    headers: { 'x-api-key': apiKey, 'content-type': contentType, 'content-length': String(size) },
    body: createReadStream(path) as unknown as RequestInit['body'],
    duplex: 'half',
  } as RequestInit);
  return (await json(response, 'upload')).upload_id;
}

/**
 * Streams a local file to POST /v1/uploads with node:http, reading it in `chunkBytes` pieces: a
 * throughput benchmark's client, kept cheap because it shares the cores with what it measures (fetch
 * with a file stream spent ~6 ms of CPU per MiB in its web-stream plumbing, as much as a whole bare
 * S3 upload). Returns the upload id.
 */
export function streamUploadFile(
  apiUrl: string,
  apiKey: string,
  path: string,
  size: number,
  chunkBytes = 1024 * 1024,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const url = new URL('/v1/uploads', apiUrl);
    const outgoing = request(
      url,
      {
        method: 'POST',
        headers: { 'x-api-key': apiKey, 'content-type': 'video/mp4', 'content-length': String(size) },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () => {
          const body = Buffer.concat(chunks).toString();
          if (response.statusCode === 201) resolve((JSON.parse(body) as { upload_id: string }).upload_id);
          else reject(new Error(`upload: HTTP ${response.statusCode} ${body}`));
        });
      },
    );
    outgoing.on('error', reject);
    createReadStream(path, { highWaterMark: chunkBytes }).on('error', reject).pipe(outgoing);
  });
}

export async function submitJob(apiUrl: string, apiKey: string, body: unknown, api = 'sdr2hdr'): Promise<any> {
  const response = await fetch(`${apiUrl}/v1/${api}/jobs`, {
    method: 'POST',
    headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return json(response, 'submit');
}

export async function getJob(apiUrl: string, apiKey: string, jobId: string, api = 'sdr2hdr'): Promise<any> {
  return json(await fetch(`${apiUrl}/v1/${api}/jobs/${jobId}`, { headers: { 'x-api-key': apiKey } }), 'get job');
}

/**
 * Keeps a region "healthy" without a worker, by writing the heartbeat a worker would write, so a
 * submit benchmark measures the API alone (no media process competes for the CPU).
 */
export function fakeHeartbeat(env: BenchEnvironment, region: string): { stop(): void } {
  const redis = new Redis(env.redisUrl);
  const beat = () => void redis.zadd(`${env.redisPrefix}:workers:${region}`, Date.now(), 'bench-heartbeat');
  beat();
  const timer = setInterval(beat, 5000);
  return {
    stop: () => {
      clearInterval(timer);
      redis.disconnect();
    },
  };
}
