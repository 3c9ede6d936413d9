// Swagger UI's "Try it out" fills the body with the example each operation documents: an API-key
// holder who sends it unchanged must get a success, not a validation error.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { call, createAccount, startApi, type TestApi } from '../support/app';
import { startMediaOrigin, type MediaOrigin } from '../support/media-origin';
import { speechVideoMp4 } from '../fixtures/media';

// No worker consumes this region's queue: a submitted job is accepted (202) and stays queued.
const REGION = 'examples';

describe('the request examples of the customer reference', () => {
  let api: TestApi;
  let origin: MediaOrigin;

  beforeAll(async () => {
    origin = await startMediaOrigin();
    origin.serve('clip.mp4', await speechVideoMp4());
    api = await startApi({
      REGION,
      STORAGE_DIR: await mkdtemp(join(tmpdir(), 'mj-examples-')),
      ALLOW_PRIVATE_URLS: '127.0.0.1',
    });
    const redis = new (await import('ioredis')).Redis(api.config.redisUrl);
    await redis.zadd(`${api.config.redisPrefix}:workers:${REGION}`, Date.now() + 3600_000, 'test-heartbeat');
    redis.disconnect();
  });
  afterAll(async () => {
    await api.close();
    await origin.close();
  });

  it('every API-key operation succeeds when its documented example body is sent as is', async () => {
    const account = await createAccount(api, { credits: 100_000 });
    const document = (await call(api, 'GET', '/docs/openapi.json')).body;
    // The examples name public hosts; tests send nothing off loopback, so those two URLs, and only
    // they, are served by stand-ins here (the bodies are otherwise sent exactly as documented).
    const standIns: Record<string, string> = {
      'https://media.example.com/clip.mp4': origin.url('clip.mp4'),
      'https://example.com/webhooks/mediajobs': origin.url('webhooks'),
    };
    const created = await call(api, 'POST', '/v1/account/api-keys', {
      key: account.apiKey,
      body: { scopes: ['keys'] },
    });
    const pathIds: Record<string, string> = { id: created.body.id };

    const outcomes: { operation: string; status: number; error?: unknown }[] = [];
    for (const [path, item] of Object.entries<Record<string, any>>(document.paths)) {
      for (const [method, operation] of Object.entries<any>(item)) {
        const media = operation?.requestBody?.content?.['application/json'];
        const byApiKey = (operation?.security ?? []).some((scheme: object) => 'api_key' in scheme);
        if (!media || !byApiKey) continue;
        expect({ operation: `${method} ${path}`, example: media.example }).toEqual({
          operation: `${method} ${path}`,
          example: expect.anything(),
        });
        let body = JSON.stringify(media.example);
        for (const [documented, standIn] of Object.entries(standIns)) body = body.split(documented).join(standIn);
        const url = path.replace(/\{(\w+)\}/g, (_, name: string) => pathIds[name] ?? name);
        const response = await call(api, method.toUpperCase(), url, { key: account.apiKey, body: JSON.parse(body) });
        outcomes.push({
          operation: `${method.toUpperCase()} ${path}`,
          status: response.status,
          error: response.body?.error,
        });
      }
    }
    expect(outcomes.map(({ operation }) => operation).sort()).toEqual([
      'POST /v1/account/api-keys',
      'POST /v1/account/api-keys/{id}/rotate',
      'POST /v1/audio/jobs',
      'POST /v1/audio/jobs/estimate',
      'POST /v1/sdr2hdr/jobs',
      'POST /v1/sdr2hdr/jobs/estimate',
      'POST /v1/webhook-endpoints',
    ]);
    expect(outcomes.filter(({ status }) => status < 200 || status >= 300)).toEqual([]);
  });
});
