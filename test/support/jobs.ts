import { readFile } from 'node:fs/promises';
import { call, type TestApi } from './app';

/** Uploads a local file through POST /v1/uploads and returns its upload id. */
export async function upload(api: TestApi, key: string, path: string, contentType = 'video/mp4'): Promise<string> {
  const response = await call(api, 'POST', '/v1/uploads', {
    key,
    rawBody: await readFile(path),
    headers: { 'content-type': contentType },
  });
  if (response.status !== 201) throw new Error(`upload failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.upload_id as string;
}

const TERMINAL = ['succeeded', 'partially_succeeded', 'failed', 'cancelled'];

/** Polls the job view until its status is one of `statuses` (default: any terminal one). */
export async function waitForJob(
  api: TestApi,
  key: string,
  path: string,
  statuses: string[] = TERMINAL,
  timeoutMs = 90_000,
): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await call(api, 'GET', path, { key });
    if (response.status !== 200) throw new Error(`GET ${path}: ${response.status} ${JSON.stringify(response.body)}`);
    if (statuses.includes(response.body.status)) return response.body;
    if (Date.now() > deadline)
      throw new Error(`job stuck in ${response.body.status}: ${JSON.stringify(response.body)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

export async function credits(api: TestApi, key: string): Promise<any> {
  return (await call(api, 'GET', '/v1/account/credits', { key })).body;
}
