// The operator surface (docs/api-decisions.md §8): /v1/admin/* behind X-Admin-Token, and the command line
// (`npm run admin -- …`) built into dist/, run as an operator would run it.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { newId } from '../../src/common/ids';
import { call, createAccount, startApi, type TestApi } from '../support/app';
import { ensureBuilt, ROOT, runScript } from '../support/dist-build';
import { expectError } from '../support/error-checks';

const ALL_SCOPES = ['sdr2hdr', 'audio', 'account', 'keys', 'webhooks'];
let cli = '';

/** Runs the operator CLI with the test environment (test database, test Redis prefix). */
const runCli = (args: string[]) => runScript(cli, args);

describe('operator API and CLI', () => {
  let api: TestApi;

  beforeAll(async () => {
    // Wrong-token attempts count against the caller's IP; this file makes some on purpose.
    api = await startApi({ IP_RATE_LIMIT: '1000' });
  });
  afterAll(() => api.close());

  const admin = (method: string, path: string, body?: unknown) =>
    call(api, method, `/v1/admin${path}`, { admin: true, body });

  describe('X-Admin-Token', () => {
    it('missing → 401 missing_api_key with param X-Admin-Token', async () => {
      const response = await call(api, 'GET', '/v1/admin/accounts');
      expectError(api, response, 'missing_api_key', 'X-Admin-Token');
      expect(response.status).toBe(401);
    });

    it('wrong → 401 invalid_api_key with param X-Admin-Token', async () => {
      const response = await call(api, 'GET', '/v1/admin/accounts', {
        headers: { 'x-admin-token': 'not-the-admin-token-at-all' },
      });
      expectError(api, response, 'invalid_api_key', 'X-Admin-Token');
      const prefixOfReal = await call(api, 'GET', '/v1/admin/accounts', {
        headers: { 'x-admin-token': (api.config.adminToken ?? '').slice(0, -1) },
      });
      expectError(api, prefixOfReal, 'invalid_api_key', 'X-Admin-Token');
    });

    it('an API key, even one with every scope, is not an operator token', async () => {
      const account = await createAccount(api);
      const response = await call(api, 'GET', '/v1/admin/accounts', { key: account.apiKey });
      expectError(api, response, 'missing_api_key', 'X-Admin-Token');
    });

    it('the admin API is closed when no ADMIN_TOKEN is configured', async () => {
      const closed = await startApi({ ADMIN_TOKEN: '' });
      try {
        expect(closed.config.adminToken).toBeNull();
        const response = await call(closed, 'GET', '/v1/admin/accounts', {
          headers: { 'x-admin-token': 'anything-at-all-0123456789' },
        });
        expectError(closed, response, 'invalid_api_key', 'X-Admin-Token');
      } finally {
        await closed.close();
      }
    });
  });

  describe('accounts', () => {
    it('create → the account and its first key (every scope), which works at once', async () => {
      const created = await admin('POST', '/accounts', { name: 'Acme Studios', plan: 'starter' });
      expect(created.status).toBe(201);
      expect(created.body.account).toMatchObject({
        object: 'account',
        name: 'Acme Studios',
        plan: 'starter',
        status: 'active',
        subscription_status: 'active',
        spend_limit_usd: null,
        balance_credits: 0,
        reserved_credits: 0,
      });
      expect(created.body.account.id).toMatch(/^acct_[0-9A-Za-z]+$/);
      expect(created.body.api_key.key).toMatch(/^mjk_[0-9A-Za-z]{32,}$/);
      expect(created.body.api_key.id).toMatch(/^key_/);
      expect([...created.body.api_key.scopes].sort()).toEqual([...ALL_SCOPES].sort());
      expect(created.headers.get('x-request-id')).toMatch(/^req_/);

      const credits = await call(api, 'GET', '/v1/account/credits', { key: created.body.api_key.key });
      expect(credits.status).toBe(200);
      expect(credits.body).toMatchObject({ object: 'credit_balance', plan: 'starter', balance_credits: 0 });

      const read = await admin('GET', `/accounts/${created.body.account.id}`);
      expect(read.status).toBe(200);
      expect(read.body).toEqual(created.body.account);
      const list = await admin('GET', '/accounts?limit=100');
      expect(list.status).toBe(200);
      expect(list.body.object).toBe('list');
      expect(list.body.data.map((account: { id: string }) => account.id)).toContain(created.body.account.id);
    });

    it('grant credits → a ledger entry, and GET /v1/account/credits shows the balance', async () => {
      const account = await createAccount(api);
      const first = await admin('POST', `/accounts/${account.accountId}/credits`, { credits: 500, reason: 'welcome' });
      expect(first.status).toBe(201);
      expect(first.body).toMatchObject({
        object: 'ledger_entry',
        kind: 'grant',
        credits: 500,
        balance_after: 500,
        reason: 'welcome',
      });
      const second = await admin('POST', `/accounts/${account.accountId}/credits`, { credits: 250, reason: 'top-up' });
      expect(second.body.balance_after).toBe(750);

      const credits = await call(api, 'GET', '/v1/account/credits', { key: account.apiKey });
      expect(credits.body).toMatchObject({ balance_credits: 750, reserved_credits: 0, available_credits: 750 });
      const ledger = await call(api, 'GET', '/v1/account/ledger', { key: account.apiKey });
      expect(ledger.status).toBe(200);
      expect(ledger.body.data.map((entry: { kind: string; credits: number }) => [entry.kind, entry.credits])).toEqual([
        ['grant', 250],
        ['grant', 500],
      ]);
    });

    it('PATCH plan, subscription_status and spend_limit_usd: each change is what the account then shows', async () => {
      const account = await createAccount(api, { plan: 'free' });
      const patched = await admin('PATCH', `/accounts/${account.accountId}`, {
        plan: 'pro',
        subscription_status: 'payment_failed',
        spend_limit_usd: 25.5,
      });
      expect(patched.status).toBe(200);
      expect(patched.body).toMatchObject({
        plan: 'pro',
        subscription_status: 'payment_failed',
        spend_limit_usd: 25.5,
        status: 'active',
      });

      const credits = await call(api, 'GET', '/v1/account/credits', { key: account.apiKey });
      expect(credits.body).toMatchObject({ plan: 'pro', spend_limit_usd: 25.5 });
      expect((await admin('GET', `/accounts/${account.accountId}`)).body).toMatchObject({
        plan: 'pro',
        subscription_status: 'payment_failed',
        spend_limit_usd: 25.5,
      });

      // Only the fields sent change; null removes the spend limit.
      const cleared = await admin('PATCH', `/accounts/${account.accountId}`, { spend_limit_usd: null });
      expect(cleared.status).toBe(200);
      expect(cleared.body).toMatchObject({ plan: 'pro', subscription_status: 'payment_failed', spend_limit_usd: null });
      expect((await call(api, 'GET', '/v1/account/credits', { key: account.apiKey })).body.spend_limit_usd).toBeNull();
      expect(
        (await admin('PATCH', `/accounts/${account.accountId}`, { subscription_status: 'inactive' })).body
          .subscription_status,
      ).toBe('inactive');
    });

    it.each([
      ['POST', '/accounts', { plan: 'free' }, 'missing_parameter', 'name'],
      ['POST', '/accounts', { name: 'x' }, 'missing_parameter', 'plan'],
      ['POST', '/accounts', { name: 'x', plan: 'gold' }, 'invalid_parameter', 'plan'],
      ['POST', '/accounts', { name: '', plan: 'free' }, 'invalid_parameter', 'name'],
      ['POST', '/accounts', { name: 'x', plan: 'free', owner: 'me' }, 'invalid_parameter', 'owner'],
      ['POST', '/accounts/{id}/credits', { reason: 'r' }, 'missing_parameter', 'credits'],
      ['POST', '/accounts/{id}/credits', { credits: 0, reason: 'r' }, 'invalid_parameter', 'credits'],
      ['POST', '/accounts/{id}/credits', { credits: 1.5, reason: 'r' }, 'invalid_parameter', 'credits'],
      ['POST', '/accounts/{id}/credits', { credits: 'ten', reason: 'r' }, 'invalid_parameter', 'credits'],
      ['POST', '/accounts/{id}/credits', { credits: 10 }, 'missing_parameter', 'reason'],
      ['PATCH', '/accounts/{id}', { status: 'banned' }, 'invalid_parameter', 'status'],
      ['PATCH', '/accounts/{id}', { plan: 'platinum' }, 'invalid_parameter', 'plan'],
      ['PATCH', '/accounts/{id}', { subscription_status: 'trial' }, 'invalid_parameter', 'subscription_status'],
      ['PATCH', '/accounts/{id}', { spend_limit_usd: -1 }, 'invalid_parameter', 'spend_limit_usd'],
      ['PATCH', '/accounts/{id}', { spend_limit_usd: '10' }, 'invalid_parameter', 'spend_limit_usd'],
    ] as const)('%s %s %j → %s (param %s)', async (method, path, body, code, param) => {
      const account = await createAccount(api);
      const response = await admin(method, path.replace('{id}', account.accountId), body);
      expectError(api, response, code, param);
      // Nothing changed.
      const after = await admin('GET', `/accounts/${account.accountId}`);
      expect(after.body).toMatchObject({
        plan: 'pro',
        status: 'active',
        subscription_status: 'active',
        balance_credits: 0,
        spend_limit_usd: null,
      });
    });

    it('an unknown account → 404 resource_missing on read, patch and grant', async () => {
      const missing = 'acct_doesnotexist0000000';
      expectError(api, await admin('GET', `/accounts/${missing}`), 'resource_missing', 'id');
      expectError(api, await admin('PATCH', `/accounts/${missing}`, { plan: 'pro' }), 'resource_missing', 'id');
      const grant = await admin('POST', `/accounts/${missing}/credits`, { credits: 5, reason: 'r' });
      expectError(api, grant, 'resource_missing', 'id');
      expect(grant.status).toBe(404);
    });
  });

  describe('blocked content', () => {
    it('add, re-add, remove; removing twice → 404 resource_missing', async () => {
      const db = api.app.get(DataSource);
      const sha256 = Array.from({ length: 64 }, () => '0123456789abcdef'[Math.floor(Math.random() * 16)]).join('');
      const isBlocked = async () =>
        (
          (await db.query(`SELECT count(*)::int AS n FROM blocked_content WHERE sha256 = $1`, [sha256])) as {
            n: number;
          }[]
        )[0].n === 1;

      const added = await admin('POST', '/blocked-content', { sha256, reason: 'takedown notice' });
      expect(added.status).toBe(201);
      expect(added.body).toMatchObject({ object: 'blocked_content', sha256, reason: 'takedown notice' });
      expect(await isBlocked()).toBe(true);
      const again = await admin('POST', '/blocked-content', { sha256 });
      expect(again.status).toBe(201);
      expect(again.body.reason).toBe('takedown notice');

      const removed = await admin('DELETE', `/blocked-content/${sha256}`);
      expect(removed.status).toBe(200);
      expect(removed.body).toEqual({ object: 'blocked_content', sha256, deleted: true });
      expect(await isBlocked()).toBe(false);
      expectError(api, await admin('DELETE', `/blocked-content/${sha256}`), 'resource_missing', 'sha256');
    });

    it.each([['ABC'], ['E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855'], [42]])(
      'a sha256 of %j is refused with param sha256',
      async (sha256) => {
        expectError(api, await admin('POST', '/blocked-content', { sha256 }), 'invalid_parameter', 'sha256');
      },
    );
  });

  describe('operator CLI (src/admin-cli.ts, built to dist/src/admin-cli.js)', () => {
    beforeAll(() => {
      cli = ensureBuilt('dist/src/admin-cli.js');
    }, 180_000);

    it('create-account prints the account and a first mjk_ key that authenticates against the API', async () => {
      const result = await runCli(['create-account', '--name', 'CLI Studio', '--plan', 'starter']);
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      const printed = JSON.parse(result.stdout);
      expect(printed.account).toMatchObject({
        object: 'account',
        name: 'CLI Studio',
        plan: 'starter',
        status: 'active',
      });
      expect(printed.api_key.key).toMatch(/^mjk_[0-9A-Za-z]{32,}$/);

      const credits = await call(api, 'GET', '/v1/account/credits', { key: printed.api_key.key });
      expect(credits.status).toBe(200);
      expect(credits.body).toMatchObject({ plan: 'starter', balance_credits: 0 });
    });

    it('grant-credits adds to the balance the API reports; suspend and unsuspend take effect', async () => {
      const account = await createAccount(api);
      const granted = await runCli([
        'grant-credits',
        account.accountId,
        '--credits',
        '300',
        '--reason',
        'support ticket 42',
      ]);
      expect(granted.code).toBe(0);
      expect(JSON.parse(granted.stdout)).toMatchObject({
        kind: 'grant',
        credits: 300,
        balance_after: 300,
        reason: 'support ticket 42',
      });
      expect((await call(api, 'GET', '/v1/account/credits', { key: account.apiKey })).body.balance_credits).toBe(300);

      expect((await runCli(['suspend', account.accountId])).code).toBe(0);
      expectError(api, await call(api, 'GET', '/v1/account/credits', { key: account.apiKey }), 'account_suspended');
      expect((await runCli(['unsuspend', account.accountId])).code).toBe(0);
      expect((await call(api, 'GET', '/v1/account/credits', { key: account.apiKey })).status).toBe(200);
    });

    it.each([
      ['no command', []],
      ['an unknown command', ['make-coffee']],
      ['create-account without --name', ['create-account']],
      ['an unknown plan', ['create-account', '--name', 'X', '--plan', 'gold']],
      ['grant-credits without --credits', ['grant-credits', 'acct_x']],
      ['grant-credits with a non-integer amount', ['grant-credits', 'acct_x', '--credits', '1.5']],
      ['an unknown option', ['create-account', '--name', 'X', '--colour', 'red']],
    ])('a usage error (%s) exits 2 with the usage text', async (_label, args) => {
      const result = await runCli(args);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/^error: /);
      expect(result.stderr).toContain('Usage: npm run admin -- <command>');
      expect(result.stdout).toBe('');
    });

    it('tells a usage error without the database or Redis: exits 2 with both unreachable', async () => {
      // Port 9 (discard) on loopback: nothing listens, a connection would be refused.
      const saved = { DATABASE_URL: process.env.DATABASE_URL, REDIS_URL: process.env.REDIS_URL };
      Object.assign(process.env, {
        DATABASE_URL: 'postgres://postgres@127.0.0.1:9/none',
        REDIS_URL: 'redis://127.0.0.1:9',
      });
      try {
        const result = await runCli(['grant-credits', 'acct_x', '--credits', '1.5']);
        expect(result).toMatchObject({ code: 2, stdout: '' });
        expect(result.stderr).toMatch(/^error: --credits must be a whole number/);
        expect(result.stderr).toContain('Usage: npm run admin -- <command>');
      } finally {
        Object.assign(process.env, saved);
      }
    });

    it('a command whose database cannot be reached exits 1 and says so on stderr', async () => {
      // Port 9 (discard) on loopback: nothing listens, every connection is refused.
      const saved = process.env.DATABASE_URL;
      process.env.DATABASE_URL = 'postgres://postgres@127.0.0.1:9/none';
      try {
        const result = await runCli(['list-accounts']);
        expect(result).toMatchObject({ code: 1, stdout: '' });
        expect(result.stderr).toMatch(/^admin command failed: .*ECONNREFUSED 127\.0\.0\.1:9/);
      } finally {
        process.env.DATABASE_URL = saved;
      }
    });

    it('runs as `npm run admin -- <command>`, the entry beside main.ts and worker.ts', async () => {
      expect(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts.admin).toBe(
        'node dist/src/admin-cli.js',
      );
      const account = await createAccount(api);
      const result = spawnSync('npm', ['run', '--silent', 'admin', '--', 'show-account', account.accountId], {
        cwd: ROOT,
        env: process.env,
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(result.stderr).toBe('');
      expect(result.status).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ object: 'account', id: account.accountId });
    });

    it("--help and -h print the usage and exit 0: the whole of it, or one command's", async () => {
      for (const args of [['--help'], ['-h']]) {
        const result = await runCli(args);
        expect(result).toMatchObject({ code: 0, stderr: '' });
        expect(result.stdout).toContain('Usage: npm run admin -- <command>');
        expect(result.stdout).toContain('audit-money');
      }
      // A command's own usage, also when the rest of the line would not parse.
      for (const [args, line] of [
        [['grant-credits', '--help'], 'Usage: npm run admin -- grant-credits <account_id> --credits <n>'],
        [['unsuspend', '-h', '--colour'], 'Usage: npm run admin -- suspend <account_id>            unsuspend'],
      ] as const) {
        const result = await runCli([...args]);
        expect(result).toMatchObject({ code: 0, stderr: '' });
        expect(result.stdout).toContain(line);
        expect(result.stdout).not.toContain('create-license');
      }
    }, 180_000);

    it('audit-money exits 0 when the money is exact, and 1 naming each account and job that breaks a rule', async () => {
      const account = await createAccount(api, { credits: 50 });
      const exact = await runCli(['audit-money', account.accountId]);
      expect(exact).toMatchObject({ code: 0, stderr: '' });
      expect(JSON.parse(exact.stdout)).toEqual({ object: 'money_audit', ok: true, problems: [] });

      // A balance moved without a ledger row, and a job whose hold was never authorised in the ledger.
      const db = api.app.get(DataSource);
      await db.query(`UPDATE accounts SET balance_credits = balance_credits + 7 WHERE id = $1`, [account.accountId]);
      const jobId = newId('job');
      await db.query(
        `INSERT INTO jobs (id, account_id, api, status, region, output_options, estimated_credits, billing_state, request_id)
         VALUES ($1, $2, 'sdr2hdr', 'failed', 'audit', '{}', 3, 'released', 'req_audit')`,
        [jobId, account.accountId],
      );
      const broken = await runCli(['audit-money', account.accountId]);
      expect(broken.code).toBe(1);
      const report = JSON.parse(broken.stdout);
      expect(report.ok).toBe(false);
      expect(report.problems.map((problem: any) => [problem.subject, problem.id, problem.rule])).toEqual([
        ['account', account.accountId, 'balance = grants − captures'],
        ['job', jobId, 'one authorise per job, for its hold'],
        ['job', jobId, 'no settlement while open, one capture and/or one release once ended'],
        ['job', jobId, 'captured = charged, captured + released = held'],
      ]);
      expect(report.problems[0].numbers).toMatchObject({ balance_credits: '57', grants: '50', captures: '0' });
    }, 120_000);

    it('an operation the service refuses exits 1 with the error code', async () => {
      const result = await runCli(['grant-credits', 'acct_doesnotexist0000000', '--credits', '5']);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('resource_missing');
      expect(result.stdout).toBe('');
    });
  });
});
