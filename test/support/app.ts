import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { AdminService } from '../../src/admin/admin.service';
import { parseConfig, type AppConfig } from '../../src/common/config/config';
import { createHttpApp } from '../../src/http-app';
import { observe, ResponseValidator, VALIDATION_MODE } from './openapi-validation';
import { freePort } from './ports';

export interface TestApi {
  app: NestFastifyApplication;
  url: string;
  config: AppConfig;
  close(): Promise<void>;
}

export { freePort };

/** A real API instance on a loopback port, configured like production but with the test env. */
export async function startApi(overrides: Record<string, string> = {}): Promise<TestApi> {
  const port = overrides.PORT ? Number(overrides.PORT) : await freePort();
  const url = `http://127.0.0.1:${port}`;
  const config = parseConfig({ ...process.env, PORT: String(port), PUBLIC_BASE_URL: url, ...overrides });
  let validator: ResponseValidator | undefined;
  const app = await createHttpApp(config, {
    // Every JSON response is checked against the document this API serves (openapi-validation.ts).
    instrument: (fastify) => {
      if (VALIDATION_MODE === 'off') return;
      fastify.addHook('onSend', async (request, reply, payload) => {
        if (validator)
          observe(validator, {
            method: request.method,
            routeUrl: request.routeOptions.url,
            status: reply.statusCode,
            contentType: reply.getHeader('content-type') as string | undefined,
            payload,
          });
        return payload;
      });
    },
  });
  await app.listen({ port, host: '127.0.0.1' });
  if (VALIDATION_MODE !== 'off') {
    try {
      validator = await liveValidator(url);
    } catch (error) {
      await app.close();
      throw error;
    }
  }
  return { app, url, config, close: () => app.close() };
}

const validators = new Map<string, ResponseValidator>();

/** The references the API serves: customers' at /docs, operators' at /docs/operator. */
export const REFERENCE_DOCUMENTS = ['/docs/openapi.json', '/docs/operator/openapi.json'];

/** The customer and operator references as one document (cut from one, they agree on every component). */
export function mergeReferences(documents: Record<string, any>[]): Record<string, any> {
  const merged: Record<string, any> = { ...documents[0], paths: {}, components: {} };
  for (const document of documents) {
    // A path may be in both (GET /v1/account for operators too, PATCH for customers only): its methods add up.
    for (const [path, item] of Object.entries<Record<string, unknown>>(document.paths ?? {}))
      merged.paths[path] = { ...merged.paths[path], ...item };
    for (const [kind, entries] of Object.entries<Record<string, unknown>>(document.components ?? {}))
      merged.components[kind] = { ...merged.components[kind], ...entries };
  }
  return merged;
}

/** The validator of the documents the API at `url` serves (compiled once per distinct pair). */
async function liveValidator(url: string): Promise<ResponseValidator> {
  const texts: string[] = [];
  for (const path of REFERENCE_DOCUMENTS) {
    const response = await fetch(`${url}${path}`);
    if (response.status !== 200) throw new Error(`GET ${path} answered ${response.status}`);
    texts.push((await response.text()).split(url).join('{PUBLIC_BASE_URL}'));
  }
  const key = texts.join('\n');
  let validator = validators.get(key);
  if (!validator) {
    validator = new ResponseValidator(mergeReferences(texts.map((text) => JSON.parse(text) as Record<string, any>)));
    validators.set(key, validator);
  }
  return validator;
}

export interface TestAccount {
  accountId: string;
  apiKey: string;
  keyId: string;
}

/** A fresh account (own rows, so no test depends on another's leftovers) with its first key. */
export async function createAccount(
  api: TestApi,
  options: { plan?: 'free' | 'starter' | 'pro' | 'enterprise'; credits?: number } = {},
): Promise<TestAccount> {
  const admin = api.app.get(AdminService);
  const { account, api_key } = await admin.createAccount('test account', options.plan ?? 'pro');
  if (options.credits) await admin.grantCredits(account.id, options.credits, 'test grant');
  return { accountId: account.id, apiKey: api_key.key!, keyId: api_key.id };
}

export interface JsonResponse {
  status: number;
  headers: Headers;
  body: any;
}

export async function call(
  api: TestApi,
  method: string,
  path: string,
  options: {
    key?: string;
    admin?: boolean;
    body?: unknown;
    rawBody?: string | Buffer;
    headers?: Record<string, string>;
  } = {},
): Promise<JsonResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers['x-api-key'] = options.key;
  if (options.admin) headers['x-admin-token'] = api.config.adminToken ?? '';
  let body: string | Buffer | undefined;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  } else if (options.rawBody !== undefined) {
    body = options.rawBody;
  }
  const response = await fetch(`${api.url}${path}`, { method, headers, body });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, headers: response.headers, body: parsed };
}
