// Shared by the licence and SDK tests: licences issued through the operator API, and a token reader
// that depends on nothing of the server's code.
import { DataSource } from 'typeorm';
import { call, createAccount, type JsonResponse, type TestApi } from './app';

export interface IssuedLicense {
  id: string;
  key: string;
  accountId: string;
}

/** A fresh licence on a fresh account, issued as an operator would (POST /v1/admin/licenses). */
export async function issueLicense(
  api: TestApi,
  options: { maxDevices?: number; graceSeconds?: number; expiresInSeconds?: number; plan?: string } = {},
): Promise<IssuedLicense> {
  const account = await createAccount(api);
  const response = await call(api, 'POST', '/v1/admin/licenses', {
    admin: true,
    body: {
      account_id: account.accountId,
      max_devices: options.maxDevices ?? 3,
      expires_at: new Date(Date.now() + (options.expiresInSeconds ?? 30 * 86400) * 1000).toISOString(),
      ...(options.graceSeconds === undefined ? {} : { offline_grace_seconds: options.graceSeconds }),
      ...(options.plan === undefined ? {} : { plan: options.plan }),
    },
  });
  if (response.status !== 201) throw new Error(`issuing a licence failed: ${JSON.stringify(response.body)}`);
  return { id: response.body.id, key: response.body.license_key, accountId: account.accountId };
}

export const activate = (api: TestApi, key: string, deviceId: string, deviceName?: string): Promise<JsonResponse> =>
  call(api, 'POST', '/v1/license/activate', {
    body: { license_key: key, device_id: deviceId, ...(deviceName ? { device_name: deviceName } : {}) },
  });

export const validate = (api: TestApi, key: string, deviceId: string): Promise<JsonResponse> =>
  call(api, 'POST', '/v1/license/validate', { body: { license_key: key, device_id: deviceId } });

export const deactivate = (api: TestApi, key: string, deviceId: string): Promise<JsonResponse> =>
  call(api, 'POST', '/v1/license/deactivate', { body: { license_key: key, device_id: deviceId } });

export const entitlements = (api: TestApi, token: string): Promise<JsonResponse> =>
  call(api, 'GET', '/v1/license', { headers: { 'x-license-token': token } });

/** The parts of a compact JWS, decoded by hand (no server code). */
export function decodeToken(token: string): { header: any; claims: any; signingInput: string; signature: Buffer } {
  const [header, payload, signature] = token.split('.');
  return {
    header: JSON.parse(Buffer.from(header, 'base64url').toString('utf8')),
    claims: JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')),
    signingInput: `${header}.${payload}`,
    signature: Buffer.from(signature, 'base64url'),
  };
}

export async function activeSeats(api: TestApi, licenseId: string): Promise<number> {
  const rows: { n: number }[] = await api.app
    .get(DataSource)
    .query('SELECT count(*)::int AS n FROM license_activations WHERE license_id = $1 AND deactivated_at IS NULL', [
      licenseId,
    ]);
  return rows[0].n;
}
