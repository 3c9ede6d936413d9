// Signing in over HTTP as the dashboard does, and calling the API with that session.
import { call, type JsonResponse, type TestApi } from './app';

export interface TestSession {
  cookie: string;
  csrf: string;
  body: any;
  setCookie: string;
}

function cookieOf(response: JsonResponse): { cookie: string; setCookie: string } {
  const setCookie = response.headers.get('set-cookie') ?? '';
  return { cookie: setCookie.split(';')[0], setCookie };
}

/** A browser-like request from the service's own origin. */
export function sameOrigin(api: TestApi): Record<string, string> {
  return { origin: new URL(api.url).origin };
}

export async function signIn(api: TestApi, email: string, password: string): Promise<TestSession> {
  const response = await call(api, 'POST', '/v1/sessions', { body: { email, password }, headers: sameOrigin(api) });
  if (response.status !== 201) throw new Error(`sign-in failed: ${response.status} ${JSON.stringify(response.body)}`);
  return { ...cookieOf(response), csrf: response.body.csrf_token, body: response.body };
}

/** Follows a set-password link (the token after #token=) with a password: signed in. */
export async function redeem(api: TestApi, link: string, password: string): Promise<TestSession> {
  const token = new URL(link).hash.replace(/^#token=/, '');
  const response = await call(api, 'POST', '/v1/password-links/redeem', {
    body: { token, password },
    headers: sameOrigin(api),
  });
  if (response.status !== 201) throw new Error(`redeem failed: ${response.status} ${JSON.stringify(response.body)}`);
  return { ...cookieOf(response), csrf: response.body.csrf_token, body: response.body };
}

/** A request with the session cookie; changes carry the CSRF token and the same-origin Origin, as the dashboard's do. */
export function asMember(
  api: TestApi,
  session: TestSession,
  method: string,
  path: string,
  options: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<JsonResponse> {
  const changes = method !== 'GET' && method !== 'HEAD';
  return call(api, method, path, {
    body: options.body,
    headers: {
      cookie: session.cookie,
      ...(changes ? { 'x-csrf-token': session.csrf, ...sameOrigin(api) } : {}),
      ...options.headers,
    },
  });
}

export const PASSWORD = 'correct horse battery staple';

let counter = 0;
/** A unique address per call: emails are unique across the service. */
export function uniqueEmail(name = 'member'): string {
  counter += 1;
  return `${name}-${process.pid}-${Date.now().toString(36)}-${counter}@example.com`;
}
