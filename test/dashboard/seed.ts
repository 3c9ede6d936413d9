// An account with something on every dashboard page, made through the public and operator APIs as a
// customer and an operator would: an owner with a password, keys (one in a rotation's grace period),
// a finished job, a webhook endpoint with a delivery, a licence with a device, an invited member.
import { sdrMp4 } from '../fixtures/media';
import { activate } from '../support/licenses';
import { call, type TestApi } from '../support/app';
import { upload, waitForJob } from '../support/jobs';
import type { DashboardBrowser } from './browser';
import { asMember, PASSWORD, redeem, uniqueEmail, type TestSession } from '../support/dashboard-session';

export interface SeededAccount {
  email: string;
  accountId: string;
  /** The account's first key (all scopes). */
  apiKey: string;
  session: TestSession;
}

/** A new account on `plan` whose owner has set a password (through the operator's one-time link). */
export async function ownerAccount(
  api: TestApi,
  options: { plan?: string; credits?: number; name?: string } = {},
): Promise<SeededAccount> {
  const email = uniqueEmail('owner');
  const created = await call(api, 'POST', '/v1/admin/accounts', {
    admin: true,
    body: { name: options.name ?? 'Acme Studios', plan: options.plan ?? 'pro', owner_email: email },
  });
  if (created.status !== 201) throw new Error(`account: ${created.status} ${JSON.stringify(created.body)}`);
  const accountId: string = created.body.account.id;
  if (options.credits) {
    await call(api, 'POST', `/v1/admin/accounts/${accountId}/credits`, {
      admin: true,
      body: { credits: options.credits, reason: 'dashboard test' },
    });
  }
  const session = await redeem(api, created.body.owner_invite_url, PASSWORD);
  return { email, accountId, apiKey: created.body.api_key.key, session };
}

export interface FullAccount extends SeededAccount {
  jobId: string;
  endpointId: string;
}

/** Something on every page (see the file's first lines). Needs a worker in the API's region. */
export async function fullAccount(api: TestApi, receiverUrl: string): Promise<FullAccount> {
  const account = await ownerAccount(api, { credits: 5000 });
  const key = account.apiKey;

  const clip = await sdrMp4({ width: 320, height: 180, seconds: 2 });
  const submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
    key,
    body: { inputs: [{ upload_id: await upload(api, key, clip) }], metadata: { project: 'trailer-2025' } },
  });
  if (submitted.status !== 202) throw new Error(`submit: ${submitted.status} ${JSON.stringify(submitted.body)}`);
  await waitForJob(api, key, `/v1/sdr2hdr/jobs/${submitted.body.job_id}`);

  const spare = await call(api, 'POST', '/v1/account/api-keys', { key, body: { scopes: ['sdr2hdr', 'account'] } });
  await call(api, 'POST', `/v1/account/api-keys/${spare.body.id}/rotate`, { key, body: { grace_seconds: 3600 } });

  const endpoint = await call(api, 'POST', '/v1/webhook-endpoints', {
    key,
    body: { url: `${receiverUrl}/hooks/mediajobs/a-rather-long-path-for-a-narrow-screen` },
  });
  await call(api, 'POST', `/v1/webhook-endpoints/${endpoint.body.id}/test`, { key });

  const licence = await call(api, 'POST', '/v1/admin/licenses', {
    admin: true,
    body: {
      account_id: account.accountId,
      max_devices: 2,
      expires_at: new Date(Date.now() + 30 * 86400_000).toISOString(),
    },
  });
  await activate(api, licence.body.license_key, 'studio-workstation-0042', 'Studio workstation');

  await asMember(api, account.session, 'POST', '/v1/account/members', {
    body: { email: uniqueEmail('invited-developer'), role: 'developer' },
  });
  return { ...account, jobId: submitted.body.job_id, endpointId: endpoint.body.id };
}

/** Signs the browser in through the sign-in page, as a person does. */
export async function signInWithBrowser(browser: DashboardBrowser, api: TestApi, email: string): Promise<void> {
  const page = browser.page;
  await page.goto(`${api.url}/dashboard/login`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
}
