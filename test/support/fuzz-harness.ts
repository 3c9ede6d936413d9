// The fuzzing harness of test/chaos/fuzz.e2e-spec.ts: the operation catalogue, the loopback-only
// guarantee, sending, what every response must look like, and the generators.
import { appRoutes as boardRoutes } from '@bull-board/api/dist/routes.js';
import fc from 'fast-check';
import * as ipaddr from 'ipaddr.js';
import { Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { QUEUE_BOARD_PATH } from '../../src/admin/queue-board';
import { CATALOGUE, isErrorCode } from '../../src/common/errors/catalogue';
import type { TestApi } from './app';

export const REGION = 'chaos-fuzz';
export const RUNS = Number(process.env.FUZZ_RUNS ?? 60);

type Access = 'key' | 'admin' | 'none';
type Pool = keyof Fixtures['pools'];

interface Operation {
  method: string;
  /** OpenAPI form: `/v1/sdr2hdr/jobs/{job_id}`. */
  path: string;
  access: Access;
  /** Where valid values for each path parameter come from. */
  params?: Record<string, Pool>;
  /** Query parameters the route reads. */
  query?: string[];
  /** A valid JSON body (built from the fixtures), or 'media' for the raw upload body. */
  body?: ((f: Fixtures) => unknown) | 'media';
  /** Bodies of the right overall shape with fuzzed contents, to get past validation more often. */
  shapes?: (f: Fixtures) => fc.Arbitrary<unknown>;
}

const LIST = ['limit', 'starting_after'];
const LEDGER_FILTERS = ['kind', 'created_gte', 'created_lt'];

/**
 * Documented operations this suite does not fuzz, each with the reason. None: the event stream, whose
 * 200 body never ends, is read up to its opening block and then hung up on (see `send`).
 */
export const NOT_FUZZED: string[] = [];
export const future = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();

/** Every documented operation (checked against /docs/openapi.json below), and how to fuzz it. */
export const OPERATIONS: Operation[] = [
  { method: 'GET', path: '/health/live', access: 'none' },
  { method: 'GET', path: '/health/ready', access: 'none' },
  { method: 'GET', path: '/v1/account/credits', access: 'key' },
  { method: 'GET', path: '/v1/account/ledger', access: 'key', query: [...LIST, ...LEDGER_FILTERS] },
  // The whole filtered ledger as one CSV file (a 200 body is text/csv, not JSON).
  { method: 'GET', path: '/v1/account/ledger/export', access: 'key', query: LEDGER_FILTERS },
  { method: 'GET', path: '/v1/account/monthly-spend', access: 'key', query: ['months'] },
  {
    method: 'POST',
    path: '/v1/account/api-keys',
    access: 'key',
    body: () => ({ scopes: ['sdr2hdr', 'audio'], expires_at: future(30) }),
  },
  { method: 'GET', path: '/v1/account/api-keys', access: 'key', query: LIST },
  { method: 'DELETE', path: '/v1/account/api-keys/{id}', access: 'key', params: { id: 'spareKey' } },
  {
    method: 'POST',
    path: '/v1/account/api-keys/{id}/rotate',
    access: 'key',
    params: { id: 'rotatableKey' },
    body: () => ({ grace_seconds: 60 }),
  },
  { method: 'POST', path: '/v1/admin/accounts', access: 'admin', body: () => ({ name: 'Fuzzed Ltd', plan: 'free' }) },
  { method: 'GET', path: '/v1/admin/accounts', access: 'admin', query: LIST },
  { method: 'GET', path: '/v1/admin/accounts/{id}', access: 'admin', params: { id: 'account' } },
  {
    method: 'PATCH',
    path: '/v1/admin/accounts/{id}',
    access: 'admin',
    params: { id: 'victimAccount' },
    body: () => ({ plan: 'starter', status: 'active', subscription_status: 'active', spend_limit_usd: 12.5 }),
  },
  {
    method: 'POST',
    path: '/v1/admin/accounts/{id}/credits',
    access: 'admin',
    params: { id: 'victimAccount' },
    body: () => ({ credits: 10, reason: 'fuzz' }),
  },
  { method: 'PUT', path: '/v1/admin/maintenance', access: 'admin', body: () => ({ enabled: false }) },
  {
    method: 'POST',
    path: '/v1/admin/blocked-content',
    access: 'admin',
    body: () => ({ sha256: 'ab'.repeat(32), reason: 'fuzz' }),
  },
  { method: 'DELETE', path: '/v1/admin/blocked-content/{sha256}', access: 'admin', params: { sha256: 'sha256' } },
  ...(['sdr2hdr', 'audio'] as const).flatMap((api): Operation[] => [
    {
      method: 'POST',
      path: `/v1/${api}/jobs`,
      access: 'key',
      shapes: (f) => submitShapes(f, api),
      body: (f) => ({
        inputs: [{ upload_id: f.uploadId }],
        output:
          api === 'sdr2hdr'
            ? { resolution: '720p', peak_nits: 1000, container: 'mp4' }
            : { target_lufs: -16, container: 'wav' },
        metadata: { customer_ref: 'A-17' },
        region: REGION,
      }),
    },
    {
      // The estimate takes the submit's body and runs the submit's checks (without a hold or a job).
      method: 'POST',
      path: `/v1/${api}/jobs/estimate`,
      access: 'key',
      shapes: (f) => submitShapes(f, api),
      body: (f) => ({ inputs: [{ upload_id: f.uploadId }], region: REGION }),
    },
    { method: 'GET', path: `/v1/${api}/jobs`, access: 'key', query: [...LIST, 'status'] },
    { method: 'GET', path: `/v1/${api}/jobs/{job_id}`, access: 'key', params: { job_id: `${api}Job` } },
    { method: 'POST', path: `/v1/${api}/jobs/{job_id}/cancel`, access: 'key', params: { job_id: `${api}Job` } },
  ]),
  { method: 'POST', path: '/v1/uploads', access: 'key', body: 'media' },
  {
    method: 'GET',
    path: '/v1/assets/{asset_id}/content',
    access: 'none',
    params: { asset_id: 'asset' },
    query: ['expires', 'signature'],
  },
  // An HLS package's files through its signed token (src/jobs/playback.controller.ts).
  {
    method: 'GET',
    path: '/v1/playback/{token}/{file}',
    access: 'none',
    params: { token: 'playbackToken', file: 'packageFile' },
  },
  {
    method: 'GET',
    path: '/v1/playback/{token}/{rendition}/{file}',
    access: 'none',
    params: { token: 'playbackToken', rendition: 'rendition', file: 'packageFile' },
  },
  {
    method: 'POST',
    path: '/v1/webhook-endpoints',
    access: 'key',
    shapes: (f) =>
      fc.record(
        {
          url: fc.oneof(loopbackUrlArb(f), fc.string({ maxLength: 30 })),
          events: fc.array(fc.oneof(fc.constantFrom('job.succeeded', 'job.failed', 'job.*'), fc.string()), {
            maxLength: 5,
          }),
        },
        { requiredKeys: [] },
      ),
    body: () => ({ url: 'http://127.0.0.1:9/hooks', events: ['job.succeeded', 'job.failed'] }),
  },
  { method: 'GET', path: '/v1/webhook-endpoints', access: 'key', query: LIST },
  { method: 'GET', path: '/v1/webhook-endpoints/{id}', access: 'key', params: { id: 'endpoint' } },
  { method: 'DELETE', path: '/v1/webhook-endpoints/{id}', access: 'key', params: { id: 'spareEndpoint' } },
  { method: 'POST', path: '/v1/webhook-endpoints/{id}/rotate-secret', access: 'key', params: { id: 'endpoint' } },
  {
    method: 'GET',
    path: '/v1/webhook-endpoints/{id}/deliveries',
    access: 'key',
    params: { id: 'endpoint' },
    query: [...LIST, 'event_id'],
  },
  { method: 'GET', path: '/v1/events', access: 'key', query: [...LIST, 'type', 'job_id'] },
  { method: 'GET', path: '/v1/events/stream', access: 'key' },
  { method: 'GET', path: '/v1/events/{id}', access: 'key', params: { id: 'event' } },
  {
    method: 'POST',
    path: '/v1/events/{id}/redeliver',
    access: 'key',
    params: { id: 'event' },
    query: ['endpoint_id'],
  },
  {
    method: 'POST',
    path: '/v1/license/activate',
    access: 'none',
    body: (f) => ({ license_key: f.licenseKey, device_id: 'fuzz-device', device_name: 'Fuzz box' }),
  },
  {
    method: 'POST',
    path: '/v1/license/validate',
    access: 'none',
    body: (f) => ({ license_key: f.licenseKey, device_id: 'fuzz-device' }),
  },
  {
    method: 'POST',
    path: '/v1/license/deactivate',
    access: 'none',
    body: (f) => ({ license_key: f.licenseKey, device_id: 'fuzz-device' }),
  },
  { method: 'GET', path: '/v1/license', access: 'none' },
  { method: 'GET', path: '/v1/license/public-key', access: 'none' },
  {
    method: 'POST',
    path: '/v1/admin/licenses',
    access: 'admin',
    body: (f) => ({
      account_id: f.accountId,
      max_devices: 3,
      expires_at: future(365),
      offline_grace_seconds: 3600,
      plan: 'studio',
    }),
  },
  { method: 'GET', path: '/v1/admin/licenses/{id}', access: 'admin', params: { id: 'license' } },
  { method: 'POST', path: '/v1/admin/licenses/{id}/revoke', access: 'admin', params: { id: 'spareLicense' } },
  // The dashboard's routes. Those for signed-in members only answer a key with 403, a missing or
  // garbled session with 401: the envelope either way.
  { method: 'GET', path: '/v1/account', access: 'key' },
  { method: 'PATCH', path: '/v1/account', access: 'key', body: () => ({ spend_limit_usd: 250 }) },
  { method: 'GET', path: '/v1/account/usage', access: 'key', query: ['days'] },
  { method: 'GET', path: '/v1/account/licenses', access: 'key' },
  {
    method: 'POST',
    path: '/v1/account/licenses/{license_id}/devices/{activation_id}/deactivate',
    access: 'key',
    params: { license_id: 'license', activation_id: 'activation' },
  },
  { method: 'GET', path: '/v1/account/members', access: 'key' },
  {
    method: 'POST',
    path: '/v1/account/members',
    access: 'key',
    body: () => ({ email: 'fuzz@example.com', role: 'viewer' }),
  },
  {
    method: 'PATCH',
    path: '/v1/account/members/{id}',
    access: 'key',
    params: { id: 'member' },
    body: () => ({ role: 'viewer' }),
  },
  { method: 'DELETE', path: '/v1/account/members/{id}', access: 'key', params: { id: 'member' } },
  { method: 'POST', path: '/v1/account/members/{id}/resend-invitation', access: 'key', params: { id: 'member' } },
  { method: 'POST', path: '/v1/webhook-endpoints/{id}/test', access: 'key', params: { id: 'endpoint' } },
  {
    method: 'POST',
    path: '/v1/sessions',
    access: 'none',
    body: (f) => ({ email: f.memberEmail, password: 'fuzzed password, never right' }),
  },
  { method: 'GET', path: '/v1/sessions/current', access: 'key' },
  { method: 'DELETE', path: '/v1/sessions/current', access: 'key' },
  { method: 'DELETE', path: '/v1/sessions', access: 'key' },
  { method: 'POST', path: '/v1/password-links', access: 'none', body: (f) => ({ email: f.memberEmail }) },
  { method: 'POST', path: '/v1/password-links/inspect', access: 'none', body: () => ({ token: 'A'.repeat(43) }) },
  {
    method: 'POST',
    path: '/v1/password-links/redeem',
    access: 'none',
    body: () => ({ token: 'A'.repeat(43), password: 'a long enough password' }),
  },
  { method: 'POST', path: '/v1/admin/password-links', access: 'admin', body: (f) => ({ email: f.memberEmail }) },
];

/** Routes outside the OpenAPI document; their success bodies are not JSON objects. */
export const UNDOCUMENTED: Operation[] = [
  { method: 'GET', path: '/metrics', access: 'none' },
  { method: 'GET', path: '/docs', access: 'none' },
  { method: 'GET', path: '/docs/openapi.json', access: 'none' },
  { method: 'GET', path: '/docs/openapi.yaml', access: 'none' },
  { method: 'GET', path: '/docs/operator', access: 'none' },
  { method: 'GET', path: '/docs/operator/openapi.json', access: 'none' },
  { method: 'GET', path: '/docs/operator/openapi.yaml', access: 'none' },
  { method: 'GET', path: '/docs/errors.html', access: 'none' },
  { method: 'GET', path: '/dashboard', access: 'none' },
  { method: 'GET', path: '/', access: 'none' },
  { method: 'GET', path: '/login', access: 'none' },
];
const NON_JSON_SUCCESS = /^\/(?:metrics|docs|dashboard)(?:[/?]|$)|^\/v1\/(?:assets|playback)\//;
/** The two paths that lead to the dashboard with a redirect. */
const REDIRECTS = /^\/(?:login)?(?:\?|$)/;

export interface Fixtures {
  apiKey: string;
  adminToken: string;
  accountId: string;
  uploadId: string;
  licenseKey: string;
  licenseToken: string;
  /** The email of a member (the account's owner) who has chosen a password. */
  memberEmail: string;
  port: number;
  pools: {
    spareKey: string[];
    rotatableKey: string[];
    account: string[];
    victimAccount: string[];
    sha256: string[];
    sdr2hdrJob: string[];
    audioJob: string[];
    asset: string[];
    /** A package's playback token (valid), and the names inside a package. */
    playbackToken: string[];
    rendition: string[];
    packageFile: string[];
    endpoint: string[];
    spareEndpoint: string[];
    event: string[];
    license: string[];
    spareLicense: string[];
    activation: string[];
    member: string[];
    /** The queue board's path values: queue names, BullMQ job ids, job states, scheduler ids. */
    queueName: string[];
    jobId: string[];
    queueStatus: string[];
    schedulerId: string[];
  };
  /** A signed link to a real stored asset: `expires` and `signature` that pass. */
  assetQuery: { expires: string; signature: string };
}

// ---------------------------------------------------------------------------------------------
// The loopback-only guarantee.

/** Hosts the fuzzer may put in a URL: loopback and private literals, and `localhost` (from /etc/hosts). */
function isSafeHost(hostname: string): boolean {
  const bare = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  if (bare === 'localhost') return true;
  if (!ipaddr.isValid(bare)) return false;
  const range = ipaddr.process(bare).range();
  return ['loopback', 'private', 'linkLocal', 'unspecified', 'uniqueLocal', 'broadcast'].includes(range);
}

/** True when the server would read `value` as an http(s) URL to a host that is not safe. */
function isUnsafeUrl(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  return (url.protocol === 'http:' || url.protocol === 'https:') && !isSafeHost(url.hostname);
}

const NEUTRAL_URL = 'http://127.0.0.1:9/neutralised.mp4';

/** Replaces every unsafe URL (in keys too) anywhere inside a JSON value. */
function neutralise(value: unknown): unknown {
  if (typeof value === 'string') return isUnsafeUrl(value) ? NEUTRAL_URL : value;
  if (Array.isArray(value)) return value.map(neutralise);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value)) {
      Object.defineProperty(out, isUnsafeUrl(key) ? 'neutralised' : key, {
        value: neutralise(inner),
        enumerable: true,
        configurable: true,
        writable: true,
      });
    }
    return out;
  }
  return value;
}

/** Every string (keys too) inside a JSON value; iterative, so any nesting depth is fine. */
function stringsIn(value: unknown): string[] {
  const found: string[] = [];
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node === 'string') found.push(node);
    else if (Array.isArray(node)) for (const inner of node) stack.push(inner);
    else if (node && typeof node === 'object') {
      for (const [key, inner] of Object.entries(node)) {
        found.push(key);
        stack.push(inner);
      }
    }
  }
  return found;
}

// ---------------------------------------------------------------------------------------------
// Sending.

export interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[]>;
  body?: Buffer;
  /** The parsed JSON body, when the body is JSON (for the region rule and echo removal). */
  json?: unknown;
}

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

export const agent = new Agent({ keepAlive: true, maxSockets: 4 });

/** Outcomes per operation (`200`, `400 invalid_parameter`, …), printed at the end as coverage evidence. */
export const stats = new Map<string, Record<string, number>>();

export function record(operation: string, response: RawResponse): void {
  let outcome = String(response.status);
  if (response.status >= 400) {
    try {
      outcome += ` ${JSON.parse(response.text).error.code}`;
    } catch {
      // HEAD: no body
    }
  }
  const counts = stats.get(operation) ?? {};
  counts[outcome] = (counts[outcome] ?? 0) + 1;
  stats.set(operation, counts);
}

export function send(port: number, request: FuzzRequest): Promise<RawResponse> {
  if (request.body) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(request.body.toString('utf8'));
    } catch {
      parsed = undefined;
    }
    // The server also parses form bodies (application/x-www-form-urlencoded): check that reading too.
    const form = [...new URLSearchParams(request.body.toString('utf8'))].flat();
    const unsafe = [...stringsIn(parsed), ...form].find(isUnsafeUrl);
    if (unsafe !== undefined) throw new Error(`refusing to send a body with a non-loopback URL: ${unsafe}`);
  }
  for (const echo of echoesOf(request)) sentStrings.add(echo);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | string[]> = { ...request.headers };
    if (request.body) headers['content-length'] = String(request.body.length);
    const outgoing = httpRequest(
      { host: '127.0.0.1', port, method: request.method, path: request.path, headers, agent, timeout: 60_000 },
      (response) => {
        const chunks: Buffer[] = [];
        // An event stream never ends: its opening block (retry and a comment) is all there is to judge.
        const stream =
          response.statusCode === 200 && /^text\/event-stream/.test(response.headers['content-type'] ?? '');
        response.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          if (stream && Buffer.concat(chunks).includes('\n\n')) {
            resolve({ status: 200, headers: response.headers, text: Buffer.concat(chunks).toString('utf8') });
            outgoing.destroy();
          }
        });
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        response.on('error', reject);
      },
    );
    outgoing.on('timeout', () => outgoing.destroy(new Error(`no response within 60 s: ${summarise(request)}`)));
    outgoing.on('error', reject);
    outgoing.end(request.body);
  });
}

/** fast-check prints a counterexample through this (a deeply nested body would overflow its printer). */
export function printable(request: FuzzRequest): FuzzRequest {
  return Object.defineProperty(request, fc.toStringMethod, { value: () => summarise(request), enumerable: false });
}

function summarise(request: FuzzRequest): string {
  const body = request.body ? request.body.toString('utf8').slice(0, 500) : '';
  return `${request.method} ${request.path.slice(0, 300)} ${JSON.stringify(request.headers).slice(0, 500)} ${body}`;
}

// ---------------------------------------------------------------------------------------------
// What every response must look like.

const ENVELOPE_KEYS = ['type', 'code', 'message', 'param', 'request_id', 'doc_url', 'retryable', 'details'];
const REQUIRED_KEYS = ['type', 'code', 'message', 'param', 'request_id', 'doc_url', 'retryable'];

/** Internal text that must never reach a client (after removing what the request itself sent). */
const LEAKS: RegExp[] = [
  /node_modules/,
  /\/(?:work|home|root|usr|tmp|var|etc|proc|srv|opt)\//,
  /\.(?:ts|js|mjs|cjs):\d+/,
  /^\s*at\s/m,
  /\bat (?:async )?[\w$.<>[\]]+ \(/,
  /\b[A-Z]\w*Error\b/,
  /(?:^|\s)Error: /,
  /\b(?:SELECT|INSERT|UPDATE|DELETE)\b[\s\S]{0,200}\b(?:FROM|INTO|SET|WHERE)\b/i,
  /duplicate key|violates .*constraint|syntax error at or near|invalid input syntax|relation "|column "/i,
  // (A source URL's ECONNREFUSED is told on purpose: it is the client's host, not ours.)
  /\b(?:ENOENT|EACCES|EISDIR|EMFILE|ENOSPC)\b/,
  /Cannot read propert|is not a function|is not defined|Maximum call stack|\[object Object\]/,
  /\bffprobe\b|\bffmpeg\b|\bpostgres(?:ql)?:\/\/|\bredis:\/\//i,
];

function fail(message: string, request: FuzzRequest, response: RawResponse): never {
  throw new Error(
    `${message}\n  request: ${summarise(request)}\n  response: ${response.status} ${response.text.slice(0, 1500)}`,
  );
}

/** Every string the test has sent so far: stored data (metadata, names, URLs) comes back later. */
const sentStrings = new Set<string>();

function checkNoLeak(parsed: unknown, request: FuzzRequest, response: RawResponse): void {
  for (const text of stringsIn(parsed)) {
    if (!LEAKS.some((pattern) => pattern.test(text))) continue;
    // Only what the client itself sent may look like internal text: remove that, then look again.
    let rest = text;
    const sent = [...sentStrings].filter((echo) => echo.length >= 3 && rest.includes(echo));
    for (const echo of sent.sort((a, b) => b.length - a.length)) rest = rest.split(echo).join(' ');
    const leak = LEAKS.find((pattern) => pattern.test(rest));
    if (leak) fail(`internal text in the response (${leak}): ${JSON.stringify(rest.slice(0, 300))}`, request, response);
  }
  if (/"stack"\s*:/.test(response.text)) fail('a "stack" field in the response', request, response);
}

/** The strings a request carries: JSON or form body, path segments, query parts, header values. */
function echoesOf(request: FuzzRequest): string[] {
  const echoes = stringsIn(request.json);
  if (request.body) echoes.push(...[...new URLSearchParams(request.body.toString('utf8'))].flat());
  const [path, query = ''] = request.path.split(/\?(.*)/s);
  const decode = (part: string) => {
    try {
      return decodeURIComponent(part.replace(/\+/g, ' '));
    } catch {
      return part;
    }
  };
  for (const segment of path.split('/')) echoes.push(segment, decode(segment));
  for (const pair of query.split('&')) for (const part of pair.split('=')) echoes.push(part, decode(part));
  for (const value of Object.values(request.headers)) echoes.push(...(Array.isArray(value) ? value : [value]));
  return echoes;
}

export function verify(api: TestApi, request: FuzzRequest, response: RawResponse): void {
  const { status } = response;
  const requestId = response.headers['x-request-id'];
  if (typeof requestId !== 'string' || !/^req_[0-9A-Za-z]+$/.test(requestId))
    fail('no X-Request-Id header', request, response);
  const contentType = String(response.headers['content-type'] ?? '');

  if (status >= 400) {
    if (!contentType.startsWith('application/json')) fail(`error with Content-Type ${contentType}`, request, response);
  }
  if (request.method === 'HEAD') {
    if (status >= 500) fail(`HEAD answered ${status}`, request, response);
    return;
  }
  if (status >= 400) {
    let body: any;
    try {
      body = JSON.parse(response.text);
    } catch {
      fail('error body is not JSON', request, response);
    }
    if (!body || typeof body !== 'object' || Array.isArray(body) || Object.keys(body).join() !== 'error')
      fail('error body is not {error: {...}}', request, response);
    const error = body.error;
    const keys = Object.keys(error);
    if (!REQUIRED_KEYS.every((key) => keys.includes(key)) || !keys.every((key) => ENVELOPE_KEYS.includes(key)))
      fail(`envelope keys ${keys.join(',')}`, request, response);
    if (!isErrorCode(error.code)) fail(`code ${error.code} is not in the catalogue`, request, response);
    const row = CATALOGUE[error.code as keyof typeof CATALOGUE];
    if (row.status !== status) fail(`status ${status} but ${error.code} is ${row.status}`, request, response);
    if (error.type !== row.type || error.retryable !== row.retryable)
      fail(`type/retryable do not match the catalogue row of ${error.code}`, request, response);
    if (error.request_id !== requestId) fail('error.request_id differs from X-Request-Id', request, response);
    if (error.doc_url !== `${api.config.docsUrl}/errors.html#${error.code}`) fail('wrong doc_url', request, response);
    if (typeof error.message !== 'string' || error.message.length === 0) fail('empty message', request, response);
    // 405 only for a method the path really lacks (HEAD is served wherever GET is).
    if (error.code === 'method_not_allowed') {
      const allow = String(response.headers.allow ?? '').split(/,\s*/);
      if (allow.includes(request.method)) fail(`405 although Allow lists ${request.method}`, request, response);
    }
    if (error.param !== null && typeof error.param !== 'string')
      fail('param is neither null nor text', request, response);
    if (
      'details' in error &&
      (typeof error.details !== 'object' || error.details === null || Array.isArray(error.details))
    )
      fail('details is not an object', request, response);
    // Only a region with no worker may answer 503 here: the fuzzer asked for another region.
    const region = (request.json as { region?: unknown } | undefined)?.region;
    const otherRegion = typeof region === 'string' && region !== REGION;
    if (status >= 500 && !(status === 503 && error.code === 'region_unavailable' && otherRegion))
      fail(`server error ${status} ${error.code}`, request, response);
    checkNoLeak(body, request, response);
    return;
  }
  if ((status >= 300 && !(status === 302 && REDIRECTS.test(request.path))) || status < 200)
    fail(`unexpected status ${status}`, request, response);
  if (status === 302) return;
  if (contentType.startsWith('text/event-stream')) {
    if (!/^retry: \d+\n: mediajobs event stream for acct_\w+\n\n/.test(response.text))
      fail('an event stream that does not open with its retry line', request, response);
    return;
  }
  if (/^\/v1\/account\/ledger\/export(?:\?|$)/.test(request.path)) {
    if (!contentType.startsWith('text/csv'))
      fail(`a ledger export with Content-Type ${contentType}`, request, response);
    return;
  }
  if (NON_JSON_SUCCESS.test(request.path) || status === 204) return;
  if (!contentType.startsWith('application/json')) fail(`success with Content-Type ${contentType}`, request, response);
  let body: any;
  try {
    body = JSON.parse(response.text);
  } catch {
    fail('success body is not JSON', request, response);
  }
  if (!body || typeof body !== 'object' || Array.isArray(body))
    fail('success body is not a JSON object', request, response);
  if (body.error && typeof body.error === 'object' && 'code' in body.error && !('object' in body))
    fail('an error envelope with a success status', request, response);
  checkNoLeak(body, request, response);
}

// ---------------------------------------------------------------------------------------------
// Generators.

/** A character Node will put in a header value: tab, visible ASCII, space, Latin-1. */
const headerChar = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)) },
  { weight: 1, arbitrary: fc.integer({ min: 0x80, max: 0xff }).map((code) => String.fromCharCode(code)) },
  { weight: 1, arbitrary: fc.constant('\t') },
);
export const headerValue = (maxLength = 80) => fc.string({ unit: headerChar, maxLength });
const base62 = (min: number, max: number) => fc.stringMatching(new RegExp(`^[0-9A-Za-z]{${min},${max}}$`));

const INTERESTING: unknown[] = [
  null,
  true,
  false,
  0,
  -0,
  -1,
  1.5,
  1e308,
  -1e308,
  2 ** 53 + 1,
  Number.MIN_VALUE,
  '',
  ' ',
  'a'.repeat(10_000),
  '🙂🙂',
  '\u0000',
  '\u202e',
  '\ud7ff\ue000',
  [],
  {},
  [null],
  [[[[[]]]]],
  { __proto__: { polluted: true } },
  '1',
  'true',
  'null',
  '2024-13-45T99:99:99Z',
  '2024-02-30T00:00:00Z',
  '+275760-09-13T00:00:00.000Z',
  '1970-01-01T00:00:00Z',
  '../../etc/passwd',
  "'; DROP TABLE accounts; --",
  '%s%n%x',
  '${7*7}{{7*7}}',
  'upl_' + 'A'.repeat(30),
  'job_' + 'B'.repeat(23),
  'acct_' + 'C'.repeat(23),
  'mjl_' + 'D'.repeat(36),
  'http://127.0.0.1:9/x.mp4',
  'http://localhost:1/',
  'http://[::1]:9/a.mov',
  'ftp://127.0.0.1/x',
  'javascript:alert(1)',
  'file:///etc/passwd',
];

/** URLs the server may fetch during the test: loopback (closed ports, or this API) or private literals. */
function loopbackUrlArb(fixtures: Fixtures): fc.Arbitrary<string> {
  return fc
    .record({
      scheme: fc.constantFrom('http', 'https', 'HTTP'),
      host: fc.constantFrom(
        '127.0.0.1',
        'localhost',
        '[::1]',
        '10.0.0.1',
        '169.254.169.254',
        '0.0.0.0',
        '[::ffff:127.0.0.1]',
        '2130706433',
        '0x7f.0.0.1',
        '127.1',
      ),
      port: fc.constantFrom('', ':1', ':9', `:${fixtures.port}`, ':0', ':65535'),
      path: fc.constantFrom('/', '/x.mp4', '/docs/openapi.json', '/health/live', '/%00', '/..%2f..%2fetc/passwd', ''),
      query: fc.option(headerValue(20).map(encodeURIComponent), { nil: undefined }),
    })
    .map(({ scheme, host, port, path, query }) => `${scheme}://${host}${port}${path}${query ? `?${query}` : ''}`);
}

/** Strings, numbers and structures that stress parsers and validators. */
function valueArb(fixtures: Fixtures): fc.Arbitrary<unknown> {
  const loopbackUrl = loopbackUrlArb(fixtures);
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...INTERESTING) },
    { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2, stringUnit: 'grapheme' }) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
    { weight: 1, arbitrary: fc.oneof(fc.integer(), fc.double(), fc.maxSafeInteger()) },
    { weight: 2, arbitrary: loopbackUrl },
    { weight: 1, arbitrary: fc.constantFrom(fixtures.uploadId, fixtures.accountId, fixtures.licenseKey) },
  );
}

/** Submit bodies: sources by URL (loopback only) or upload, outputs and metadata, valid or nearly. */
function submitShapes(fixtures: Fixtures, api: 'sdr2hdr' | 'audio'): fc.Arbitrary<unknown> {
  const values = valueArb(fixtures);
  /** Mostly `valid`, sometimes any value. */
  const mostly = <T>(valid: fc.Arbitrary<T>) =>
    fc.oneof({ weight: 4, arbitrary: valid }, { weight: 1, arbitrary: values });
  const uploadId = fc.oneof(
    { weight: 3, arbitrary: fc.constant(fixtures.uploadId) },
    { weight: 1, arbitrary: base62(10, 40).map((tail) => `upl_${tail}`) },
  );
  const input = fc.oneof(
    fc.record({ source_url: loopbackUrlArb(fixtures) }),
    fc.record({ upload_id: uploadId }),
    fc.record({ source_url: loopbackUrlArb(fixtures), upload_id: uploadId }),
    fc.constant({}),
  );
  const output =
    api === 'sdr2hdr'
      ? fc.record(
          {
            resolution: mostly(fc.constantFrom('source', '720p', '1080p', '2160p', '4k')),
            peak_nits: mostly(fc.integer({ min: 0, max: 20_000 })),
            container: mostly(fc.constantFrom('mp4', 'mov', 'mkv')),
          },
          { requiredKeys: [] },
        )
      : fc.record(
          {
            target_lufs: mostly(fc.double({ min: -60, max: 5, noNaN: true })),
            container: mostly(fc.constantFrom('wav', 'm4a', 'mp3')),
          },
          { requiredKeys: [] },
        );
  return fc.record(
    {
      inputs: fc.array(input, { minLength: 0, maxLength: 3 }),
      output,
      metadata: mostly(fc.dictionary(fc.string({ maxLength: 8 }), fc.string({ maxLength: 20 }), { maxKeys: 60 })),
      region: mostly(fc.constantFrom(REGION, REGION, REGION, 'local', 'chaos-nowhere', 'UPPER', '')),
    },
    { requiredKeys: ['inputs'] },
  );
}

/** Every path (object keys and array indices) inside a JSON value. */
function pathsOf(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  const paths: (string | number)[][] = [];
  if (Array.isArray(value)) {
    value.forEach((inner, index) => {
      paths.push([...prefix, index], ...pathsOf(inner, [...prefix, index]));
    });
  } else if (value && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) paths.push([...prefix, key], ...pathsOf(inner, [...prefix, key]));
  }
  return paths;
}

type Mutation = 'replace' | 'delete' | 'add' | 'wrap' | 'stringify' | 'nest';

function mutate(valid: unknown, at: number, kind: Mutation, value: unknown, key: string): unknown {
  const copy = structuredClone(valid) as Record<string | number, unknown>;
  const paths = pathsOf(copy);
  if (paths.length === 0) return value;
  const path = paths[at % paths.length];
  const parent = path.slice(0, -1).reduce<any>((node, step) => node[step], copy);
  const last = path[path.length - 1];
  switch (kind) {
    case 'replace':
      parent[last] = value;
      break;
    case 'delete':
      if (Array.isArray(parent) && typeof last === 'number') parent.splice(last, 1);
      else delete parent[last];
      break;
    case 'add':
      Object.defineProperty(typeof parent === 'object' && !Array.isArray(parent) ? parent : copy, key, {
        value,
        enumerable: true,
        configurable: true,
        writable: true,
      });
      break;
    case 'wrap':
      parent[last] = [parent[last]];
      break;
    case 'stringify':
      parent[last] = JSON.stringify(parent[last]) ?? 'undefined';
      break;
    case 'nest':
      parent[last] = { [key]: parent[last] };
      break;
  }
  return copy;
}

/** Raw JSON texts JSON.stringify cannot produce. */
const RAW_BODIES = [
  '',
  ' ',
  'null',
  '""',
  '[]',
  '{',
  '{"a":',
  '{"inputs": [',
  '1e999',
  '{"inputs":[{"upload_id":1e999}]}',
  '{"grace_seconds":1e400,"credits":123456789012345678901234567890}',
  '{"credits":-0,"reason":"x"}',
  '{"__proto__":{"polluted":true}}',
  '{"constructor":{"prototype":{"polluted":true}}}',
  '{"a":1,"a":2}',
  '\ufeff{}',
  '{"inputs":[{"upload_id":"\\ud800"}]}',
  '\u0000',
  'undefined',
  'NaN',
  "{'single':'quotes'}",
  '['.repeat(5000) + ']'.repeat(5000),
  '{"a":'.repeat(3000) + '1' + '}'.repeat(3000),
  '{"inputs":' + '['.repeat(2000) + ']'.repeat(2000) + '}',
  '{"metadata":' + '{"a":'.repeat(2000) + '1' + '}'.repeat(2000) + '}',
  JSON.stringify({ inputs: Array.from({ length: 5000 }, () => ({})) }),
  JSON.stringify({ scopes: Array.from({ length: 20000 }, () => 'audio') }),
  JSON.stringify({ metadata: Object.fromEntries(Array.from({ length: 20000 }, (_, i) => [`k${i}`, 'v'])) }),
];

const JSON_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'APPLICATION/JSON',
  'application/json; charset=latin1',
  'application/json; charset=utf-16',
  'application/json;',
  'application/json ; foo=bar',
  'application/problem+json',
  'application/vnd.api+json',
  'text/json',
  'text/plain',
  'text/plain; charset=utf-8',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=xyz',
  'video/mp4',
  'audio/wav',
  'application/octet-stream',
  '',
  ';;;',
  '*/*',
  'application/',
];

interface BodyPart {
  body?: Buffer;
  json?: unknown;
  contentType?: string;
}

function jsonBodyArb(
  fixtures: Fixtures,
  valid: unknown | undefined,
  shapes?: fc.Arbitrary<unknown>,
): fc.Arbitrary<BodyPart> {
  const values = valueArb(fixtures);
  const keyArb = fc.oneof(
    fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'inputs', 'id', '', ' '),
    fc.string({ maxLength: 12 }),
  );
  const mutated =
    valid === undefined
      ? fc.jsonValue({ maxDepth: 3 })
      : fc
          .record({
            at: fc.nat(),
            kind: fc.constantFrom<Mutation>(
              'replace',
              'replace',
              'replace',
              'delete',
              'add',
              'wrap',
              'stringify',
              'nest',
            ),
            value: values,
            key: keyArb,
            twice: fc.boolean(),
            at2: fc.nat(),
            value2: values,
          })
          .map(({ at, kind, value, key, twice, at2, value2 }) => {
            const once = mutate(valid, at, kind, value, key);
            return twice ? mutate(once, at2, 'replace', value2, key) : once;
          });
  const structured = fc
    .oneof(
      { weight: 6, arbitrary: mutated },
      { weight: 1, arbitrary: fc.constant(valid ?? {}) },
      { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 4 }) },
      { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3, stringUnit: 'binary' }) },
      { weight: 1, arbitrary: fc.dictionary(keyArb, values, { maxKeys: 6 }) },
      { weight: shapes ? 6 : 0, arbitrary: shapes ?? fc.constant({}) },
    )
    .map(neutralise)
    .map((json): BodyPart => ({ json, body: Buffer.from(JSON.stringify(json) ?? 'null') }));
  const raw = fc.constantFrom(...RAW_BODIES).map((text): BodyPart => {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { body: Buffer.from(text), json };
  });
  const bytes = fc.uint8Array({ maxLength: 512 }).map((array): BodyPart => ({ body: Buffer.from(array) }));
  const latin1 = fc
    .string({ unit: 'binary-ascii', maxLength: 200 })
    .map((text): BodyPart => ({ body: Buffer.from(text, 'latin1') }));
  const contentType = fc.oneof(
    { weight: 20, arbitrary: fc.constant('application/json') },
    { weight: 3, arbitrary: fc.constantFrom(...JSON_TYPES) },
    { weight: 1, arbitrary: headerValue(40) },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
  return fc
    .tuple(
      fc.oneof(
        { weight: 12, arbitrary: structured },
        { weight: 2, arbitrary: raw },
        { weight: 1, arbitrary: bytes },
        { weight: 1, arbitrary: latin1 },
        { weight: valid === undefined ? 4 : 1, arbitrary: fc.constant<BodyPart>({}) },
      ),
      contentType,
    )
    .map(([part, type]) => (part.body === undefined ? part : { ...part, contentType: type }));
}

function mediaBodyArb(): fc.Arbitrary<BodyPart> {
  return fc.record({
    body: fc.uint8Array({ maxLength: 4096 }).map((array) => Buffer.from(array)),
    contentType: fc.oneof(
      fc.constantFrom(
        'video/mp4',
        'video/quicktime',
        'audio/wav',
        'audio/x-unknown; codecs=xyz',
        'application/octet-stream',
        'video/',
        'VIDEO/MP4',
        'application/json',
        'text/plain',
        'multipart/form-data; boundary=x',
        '',
      ),
      headerValue(30),
    ),
  });
}

export function credentialArb(fixtures: Fixtures, access: Access): fc.Arbitrary<Record<string, string | string[]>> {
  const key = fixtures.apiKey;
  const garbage = headerValue(60);
  const unknownKey = base62(32, 48).map((tail) => `mjk_${tail}`);
  const keyVariants = fc.constantFrom(
    ` ${key}`,
    `${key} `,
    `${key}x`,
    key.slice(0, -1),
    key.toUpperCase(),
    key.replace('mjk_', 'MJK_'),
    `Bearer ${key}`,
  );
  const none = fc.constant({});
  const withKey = fc.constant({ 'x-api-key': key });
  const withAdmin = fc.constant({ 'x-admin-token': fixtures.adminToken });
  const options: Record<Access, fc.WeightedArbitrary<Record<string, string | string[]>>[]> = {
    key: [
      { weight: 24, arbitrary: withKey },
      { weight: 1, arbitrary: none },
      { weight: 1, arbitrary: garbage.map((value) => ({ 'x-api-key': value })) },
      { weight: 1, arbitrary: unknownKey.map((value) => ({ 'x-api-key': value })) },
      { weight: 1, arbitrary: keyVariants.map((value) => ({ 'x-api-key': value })) },
      { weight: 1, arbitrary: fc.constant({ 'x-api-key': [key, key] }) },
      { weight: 1, arbitrary: withAdmin },
    ],
    admin: [
      { weight: 24, arbitrary: withAdmin },
      { weight: 1, arbitrary: none },
      { weight: 1, arbitrary: garbage.map((value) => ({ 'x-admin-token': value })) },
      { weight: 1, arbitrary: fc.constant({ 'x-admin-token': key }) },
      { weight: 1, arbitrary: fc.constant({ 'x-admin-token': [fixtures.adminToken, fixtures.adminToken] }) },
      { weight: 1, arbitrary: withKey },
    ],
    none: [
      { weight: 12, arbitrary: none },
      { weight: 1, arbitrary: garbage.map((value) => ({ 'x-api-key': value })) },
      { weight: 1, arbitrary: withKey },
      { weight: 1, arbitrary: withAdmin },
    ],
  };
  return fc.oneof(...options[access]);
}

/** One path segment: a valid id, a look-alike, or something hostile. */
export function segmentArb(valid: string[]): fc.Arbitrary<string> {
  const hostile = fc.constantFrom(
    '..',
    '.',
    '%2e%2e',
    '%2E',
    '%00',
    '%ff',
    '%',
    '%zz',
    '%C0%AE',
    'a%2Fb',
    '%5C..%5C',
    "'",
    '"',
    '<script>',
    ';',
    '*',
    '~',
    '-1',
    '0',
    '1e309',
    'null',
    'undefined',
    '__proto__',
    'constructor',
    '%20',
    '+',
    'a'.repeat(300),
    'x'.repeat(5000),
  );
  const rawChar = fc
    .integer({ min: 0x21, max: 0xff })
    .filter((code) => code !== 0x2f && code !== 0x3f && code !== 0x23 && (code < 0x7f || code > 0x9f))
    .map((code) => String.fromCharCode(code));
  return fc.oneof(
    { weight: valid.length ? 6 : 0, arbitrary: valid.length ? fc.constantFrom(...valid) : fc.constant('x') },
    {
      weight: 3,
      arbitrary: fc
        .tuple(fc.constantFrom('job', 'key', 'acct', 'upl', 'ast', 'we', 'evt', 'lic', 'dlv', 'xyz'), base62(0, 70))
        .map(([prefix, tail]) => `${prefix}_${tail}`),
    },
    { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 30 }).map(encodeURIComponent) },
    { weight: 2, arbitrary: hostile },
    { weight: 1, arbitrary: fc.string({ unit: rawChar, minLength: 1, maxLength: 30 }) },
  );
}

export function queryArb(names: string[], fixtures: Fixtures): fc.Arbitrary<string> {
  const known = ['limit', 'starting_after', ...names];
  const name = fc.oneof(
    { weight: 5, arbitrary: fc.constantFrom(...known) },
    { weight: 1, arbitrary: fc.constantFrom(...known).map((n) => `${n}[]`) },
    { weight: 1, arbitrary: fc.string({ maxLength: 10 }) },
  );
  const value = fc.oneof(
    {
      weight: 4,
      arbitrary: fc.constantFrom(
        '1',
        '0',
        '-1',
        '100',
        '101',
        '1e3',
        '1.5',
        '0x10',
        'NaN',
        'Infinity',
        '',
        'null',
        'true',
        '[]',
        '{}',
        'a'.repeat(3000),
        'job_x',
        'queued',
        'succeeded',
        'job.failed',
        'evt_abc',
        'we_abc',
        'abc_' + 'Z'.repeat(64),
        'abc_' + 'Z'.repeat(65),
        fixtures.assetQuery.expires,
        fixtures.assetQuery.signature,
        '99999999999999',
        '999999999999',
      ),
    },
    { weight: 2, arbitrary: fc.string({ maxLength: 20 }) },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 10 }) },
    { weight: 1, arbitrary: fc.integer().map(String) },
  );
  const pair = fc
    .tuple(name, value, fc.boolean())
    .map(([n, v, raw]) =>
      raw
        ? `${n.replace(/[^\x21-\x7e]|[#&=]/g, '')}=${v.replace(/[^\x21-\x7e]|#/g, '')}`
        : `${encodeURIComponent(n)}=${encodeURIComponent(v)}`,
    );
  // The asset route's valid signed query, alone or with fuzzed pairs around it.
  const { expires, signature } = fixtures.assetQuery;
  const signed = fc.tuple(fc.array(pair, { maxLength: 2 }), fc.boolean()).map(([extra, first]) => {
    const valid = [`expires=${expires}`, `signature=${signature}`];
    return `?${(first ? [...valid, ...extra] : [...extra, ...valid]).join('&')}`;
  });
  const signs = names.includes('signature');
  return fc.oneof(
    { weight: 3, arbitrary: fc.constant('') },
    { weight: 6, arbitrary: fc.array(pair, { minLength: 1, maxLength: 4 }).map((pairs) => `?${pairs.join('&')}`) },
    { weight: signs ? 6 : 0, arbitrary: signed },
    { weight: 1, arbitrary: fc.constantFrom('?', '?&&', '?=', '?%', '?%zz=1', '?limit', '?limit=1&limit=2', '?a=%00') },
  );
}

export function requestArb(op: Operation, fixtures: Fixtures): fc.Arbitrary<FuzzRequest> {
  const segments = op.path.split('/').map((segment) => {
    const param = /^\{(.+)\}$/.exec(segment)?.[1];
    if (!param) return fc.constant(segment);
    const pool = op.params?.[param];
    return segmentArb(pool ? fixtures.pools[pool] : []);
  });
  const path = fc
    .tuple(
      fc.tuple(...segments).map((parts) => parts.join('/')),
      fc.oneof(
        { weight: 12, arbitrary: fc.constant('') },
        { weight: 1, arbitrary: fc.constantFrom('/', '//', '/extra', '/..', '/%2e%2e/%2e%2e/health/live') },
      ),
      op.query
        ? queryArb(op.query, fixtures)
        : fc.oneof({ weight: 4, arbitrary: fc.constant('') }, { weight: 1, arbitrary: queryArb([], fixtures) }),
    )
    .map(([base, suffix, query]) => `${base}${suffix}${query}`);
  const method = fc.oneof(
    { weight: 12, arbitrary: fc.constant(op.method) },
    { weight: 1, arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD') },
  );
  const body: fc.Arbitrary<BodyPart> =
    op.body === 'media'
      ? mediaBodyArb()
      : fc.oneof(
          {
            weight: op.body ? 10 : 1,
            arbitrary: jsonBodyArb(fixtures, op.body ? op.body(fixtures) : undefined, op.shapes?.(fixtures)),
          },
          { weight: op.body ? 0 : 4, arbitrary: fc.constant<BodyPart>({}) },
        );
  const extraHeaders = fc.record(
    {
      'idempotency-key': fc.oneof(
        { weight: 6, arbitrary: fc.uuid() },
        { weight: 2, arbitrary: headerValue(40) },
        { weight: 1, arbitrary: fc.constantFrom('k'.repeat(255), 'k'.repeat(256), '', ' ', '\t') },
      ),
      accept: fc.oneof(fc.constantFrom('application/json', 'text/html', '*/*', 'application/xml', ''), headerValue(30)),
      range: fc.oneof(
        fc.constantFrom(
          'bytes=0-0',
          'bytes=0-',
          'bytes=-1',
          'bytes=5-2',
          'bytes=-',
          'bytes=0-1,2-3',
          'bytes=99999999999999999999-',
          'items=0-1',
        ),
        headerValue(30),
      ),
      'x-license-token': fc.oneof(
        fc.constant(fixtures.licenseToken),
        fc.constant(fixtures.licenseToken.slice(0, -2)),
        fc.constant(fixtures.licenseToken.split('.').reverse().join('.')),
        fc.tuple(base62(0, 40), base62(0, 40), base62(0, 40)).map((parts) => parts.join('.')),
        headerValue(80),
      ),
      'x-request-id': headerValue(40),
      'accept-encoding': fc.constantFrom('gzip', 'br', 'identity', '*', 'gzip;q=0'),
    },
    { requiredKeys: [] },
  );
  return fc
    .record({
      method,
      path,
      credentials: credentialArb(fixtures, op.access),
      body,
      extra: extraHeaders,
    })
    .map(({ method: m, path: p, credentials, body: b, extra }) => {
      const headers: Record<string, string | string[]> = { ...extra, ...credentials };
      if (b.contentType !== undefined) headers['content-type'] = b.contentType;
      return printable({ method: m, path: p, headers, body: b.body, json: b.json });
    });
}

// ---------------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------------
// The queue board (src/admin/queue-board.ts): bull-board's own pages and JSON API under
// /admin/queues, behind the operator token (X-Admin-Token or the sign-in cookie). Not in the
// OpenAPI document: its routes are the board's own, listed here from bull-board itself.

/** Every route the board mounts (its page routes and its API), in OpenAPI form. */
export const BOARD_OPERATIONS: Operation[] = [
  ...[boardRoutes.entryPoint.route].flat().map((route) => ({ method: 'get', route })),
  ...boardRoutes.api,
].map(({ method, route }) => {
  const path = `${QUEUE_BOARD_PATH}${route === '/' ? '' : String(route)}`.replace(/:(\w+)/g, '{$1}');
  const params = Object.fromEntries([...path.matchAll(/\{(\w+)\}/g)].map(([, name]) => [name, name as Pool]));
  return { method: String(method).toUpperCase(), path, access: 'admin', params };
});

/** The board's credentials: the token, the sign-in cookie, a stale or forged cookie, none, a wrong token. */
function boardCredentialArb(fixtures: Fixtures, cookie: string): fc.Arbitrary<Record<string, string | string[]>> {
  const forged = cookie.replace(/\.(.)/, (_match, first: string) => `.${first === 'A' ? 'B' : 'A'}`);
  return fc.oneof(
    { weight: 4, arbitrary: fc.constant({ 'x-admin-token': fixtures.adminToken }) },
    { weight: 3, arbitrary: fc.constant({ cookie }) },
    { weight: 2, arbitrary: fc.constant({}) },
    { weight: 1, arbitrary: headerValue(60).map((value) => ({ 'x-admin-token': value })) },
    { weight: 1, arbitrary: fc.constant({ 'x-admin-token': fixtures.apiKey }) },
    { weight: 1, arbitrary: fc.constant({ 'x-api-key': fixtures.apiKey }) },
    { weight: 1, arbitrary: fc.constant({ cookie: forged }) },
    { weight: 1, arbitrary: fc.constant({ cookie: `mj_queue_board=1.${'A'.repeat(43)}` }) },
  );
}

/** A board request: the route's own fuzzing (path, query, body, headers) with the board's credentials. */
export function boardRequestArb(op: Operation, fixtures: Fixtures, cookie: string): fc.Arbitrary<FuzzRequest> {
  return fc.tuple(requestArb(op, fixtures), boardCredentialArb(fixtures, cookie)).map(([request, credentials]) => {
    const headers = { ...request.headers };
    delete headers['x-admin-token'];
    delete headers['x-api-key'];
    return printable({ ...request, headers: { ...headers, ...credentials } });
  });
}

/**
 * Below 500 always. Without a valid credential: never the board, a refusal in the envelope (or,
 * for a browser's GET and a failed sign-in, the sign-in page). With one: the board's own answer (its JSON, pages and assets)
 * below 400, the envelope for anything else; no internal text in any JSON body either way.
 */
export function verifyBoard(api: TestApi, request: FuzzRequest, response: RawResponse, authorised: boolean): void {
  if (response.status >= 500) fail(`server error ${response.status}`, request, response);
  const contentType = String(response.headers['content-type'] ?? '');
  // Refused before the board: 401, or what the API answers a malformed request or an unknown path.
  if (!authorised) {
    if (response.status < 400) fail(`no valid credential but ${response.status}`, request, response);
    if (contentType.startsWith('text/html')) {
      const signInPage = response.status === 401 && response.text.includes('Sign in with the admin token');
      const signingIn = request.method === 'POST' && request.path.split('?')[0] === `${QUEUE_BOARD_PATH}/session`;
      if (!(request.method === 'GET' || signingIn) || !signInPage)
        fail('an HTML refusal that is not the sign-in page', request, response);
      return;
    }
    return verify(api, request, response);
  }
  // Every refusal is the envelope, bull-board's own included (issue 29 item 10, docs/api-decisions.md §1):
  // never its `{error: {key: 'ERRORS.QUEUE_NOT_FOUND'}}` nor Fastify's own bodies.
  if (response.status >= 400) return verify(api, request, response);
  if (!contentType.startsWith('application/json') || request.method === 'HEAD') return;
  let body: unknown;
  try {
    body = JSON.parse(response.text);
  } catch {
    fail('a JSON answer that does not parse', request, response);
  }
  checkNoLeak(body, request, response);
}
