// A customer's statement through the API: the ledger filtered by kind and time (a page at a time, or
// all of it as one CSV download), charges per month beside the spend cap, and where credits come from
// — the operator's top-up page (BILLING_TOPUP_URL) in the balance and in insufficient_credits.
import { Redis } from 'ioredis';
import { DataSource } from 'typeorm';
import { workersKey } from '../../src/queues/keys';
import { newId } from '../../src/common/ids';
import { sdrMp4 } from '../fixtures/media';
import { call, createAccount, startApi, type TestAccount, type TestApi } from '../support/app';
import { upload } from '../support/jobs';
import { countUsageAgain } from '../support/usage-days';
import { expectError } from '../support/error-checks';

const TOPUP = 'https://billing.mediajobs.example/topup?ref=dashboard';
// No worker: heartbeats keep the region open for submits; nothing is processed.
const REGION = 'statement';

describe('the billing statement API', () => {
  let api: TestApi;
  let plain: TestApi;
  let db: DataSource;

  beforeAll(async () => {
    api = await startApi({ REGION, BILLING_TOPUP_URL: TOPUP });
    plain = await startApi({ REGION });
    db = api.app.get(DataSource);
    const redis = new Redis(api.config.redisUrl);
    await redis.zadd(workersKey(api.config, REGION), Date.now() + 3600_000, 'statement-worker');
    redis.disconnect();
  });
  afterAll(async () => {
    await api?.close();
    await plain?.close();
  });

  /** A ledger row as the billing code writes it, at a chosen time (a factory: the history of a past month). */
  async function entry(
    account: TestAccount,
    kind: string,
    credits: number,
    createdAt: Date,
    reason: string | null = null,
  ) {
    const id = newId('led');
    await db.query(
      `INSERT INTO credit_ledger (id, account_id, kind, credits, job_id, reason, balance_after, reserved_after, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, 0, 0, $7)`,
      [id, account.accountId, kind, credits, kind === 'grant' ? null : newId('job'), reason, createdAt],
    );
    return id;
  }

  const ledger = (account: TestAccount, query: string) =>
    call(api, 'GET', `/v1/account/ledger?${query}`, { key: account.apiKey });

  it('filters the ledger by kind and by a time range, and pages through what the filter keeps', async () => {
    const account = await createAccount(api, { credits: 100 });
    const october = new Date(Date.UTC(2026, 9, 15));
    const november = new Date(Date.UTC(2026, 10, 15));
    const captures = [
      await entry(account, 'capture', 5, october),
      await entry(account, 'capture', 7, november),
      // A second later: two rows of one instant are ordered by id, whose random part decides within a millisecond.
      await entry(account, 'capture', 9, new Date(november.getTime() + 1000)),
    ];
    await entry(account, 'release', 3, november);

    const kind = await ledger(account, 'kind=capture');
    expect(kind.status).toBe(200);
    expect(kind.body.data.map((row: { id: string }) => row.id)).toEqual([...captures].reverse());

    const inNovember = await ledger(account, 'kind=capture&created_gte=2026-11-01&created_lt=2026-12-01T00:00:00Z');
    expect(inNovember.body.data.map((row: { credits: number }) => row.credits)).toEqual([9, 7]);

    // Paging keeps the filter: one at a time, then the next.
    const first = await ledger(account, 'kind=capture&created_gte=2026-11-01&limit=1');
    expect(first.body).toMatchObject({ has_more: true, data: [{ credits: 9 }] });
    const second = await ledger(
      account,
      `kind=capture&created_gte=2026-11-01&limit=1&starting_after=${first.body.next_cursor}`,
    );
    expect(second.body).toMatchObject({ has_more: false, next_cursor: null, data: [{ credits: 7 }] });

    // The operator's grant is there too, unfiltered.
    expect((await ledger(account, 'kind=grant')).body.data).toMatchObject([{ kind: 'grant', credits: 100 }]);
  });

  it('a bad filter is a 400 naming the parameter', async () => {
    const account = await createAccount(api);
    expectError(api, await ledger(account, 'kind=refund'), 'invalid_parameter', 'kind');
    expectError(api, await ledger(account, 'created_gte=last-tuesday'), 'invalid_parameter', 'created_gte');
    expectError(
      api,
      await call(api, 'GET', '/v1/account/ledger/export?created_lt=31/12/2026', { key: account.apiKey }),
      'invalid_parameter',
      'created_lt',
    );
  });

  it('exports every entry the filter keeps as one CSV download, the same rows as the pages, formulas neutralised', async () => {
    const account = await createAccount(api);
    const when = new Date(Date.UTC(2026, 10, 2));
    // The oldest (the last line): an operator's reason a spreadsheet would run as a formula.
    await entry(account, 'grant', 1, when, '=HYPERLINK("x"), thanks');
    await new Promise((resolve) => setTimeout(resolve, 5));
    const ids = Array.from({ length: 1202 }, () => newId('led'));
    await db.query(
      `INSERT INTO credit_ledger (id, account_id, kind, credits, balance_after, reserved_after, created_at)
       SELECT unnest($1::text[]), $2, 'grant', 1, 0, 0, $3`,
      [ids, account.accountId, when],
    );
    await entry(account, 'capture', 4, when);

    const response = await fetch(`${api.url}/v1/account/ledger/export?kind=grant&created_gte=2026-11-01`, {
      headers: { 'x-api-key': account.apiKey },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(response.headers.get('content-disposition')).toMatch(
      new RegExp(`^attachment; filename="mediajobs-ledger-${account.accountId}-\\d{4}-\\d{2}-\\d{2}\\.csv"$`),
    );
    const lines = (await response.text()).split('\r\n');
    expect(lines.pop()).toBe('');
    expect(lines[0]).toBe('created_at,id,kind,credits,balance_after,reserved_after,job_id,reason');

    // The same ids, in the same order, as paging through GET /v1/account/ledger with the same filter
    // (the export reads in batches of 1000: 1203 rows cross a batch boundary).
    const paged: string[] = [];
    for (let after = ''; ;) {
      const page = await ledger(
        account,
        `kind=grant&created_gte=2026-11-01&limit=100${after && `&starting_after=${after}`}`,
      );
      paged.push(...page.body.data.map((row: { id: string }) => row.id));
      if (!page.body.has_more) break;
      after = page.body.next_cursor;
    }
    expect(lines.slice(1).map((line) => line.split(',')[1])).toEqual(paged);
    expect(paged).toHaveLength(1203);
    expect(lines[lines.length - 1]).toMatch(/,grant,1,0,0,,"'=HYPERLINK\(""x""\), thanks"$/);
  });

  it('charges per UTC month beside the spend cap; this month equals spent_usd of the balance', async () => {
    const account = await createAccount(api, { credits: 1000 });
    const now = new Date();
    const lastMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 10));
    await entry(account, 'capture', 500, lastMonth);
    await entry(account, 'capture', 250, now);
    await countUsageAgain(db, account.accountId);
    await db.query(`UPDATE accounts SET spend_limit_usd = 25 WHERE id = $1`, [account.accountId]);

    const spend = await call(api, 'GET', '/v1/account/monthly-spend?months=3', { key: account.apiKey });
    expect(spend.status).toBe(200);
    const month = (date: Date) => date.toISOString().slice(0, 7);
    // pro: 0.006 USD a credit.
    expect(spend.body).toEqual({
      object: 'monthly_spend',
      months: [
        {
          month: month(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 2, 1))),
          charged_credits: 0,
          charged_usd: 0,
        },
        { month: month(lastMonth), charged_credits: 500, charged_usd: 3 },
        { month: month(now), charged_credits: 250, charged_usd: 1.5 },
      ],
      spend_limit_usd: 25,
    });
    const credits = await call(api, 'GET', '/v1/account/credits', { key: account.apiKey });
    expect(credits.body.spent_usd).toBe(1.5);
    expectError(
      api,
      await call(api, 'GET', '/v1/account/monthly-spend?months=25', { key: account.apiKey }),
      'invalid_parameter',
      'months',
    );
  });

  it("the balance names the operator's top-up page, and insufficient_credits says where to buy credits", async () => {
    const account = await createAccount(api);
    expect((await call(api, 'GET', '/v1/account/credits', { key: account.apiKey })).body.topup_url).toBe(TOPUP);
    const message = `Your available credits do not cover the estimated cost of this job. Buy credits at ${TOPUP}, or submit a shorter job.`;

    const estimate = await call(api, 'POST', '/v1/sdr2hdr/jobs/estimate', {
      key: account.apiKey,
      body: { inputs: [{ media: { duration_seconds: 30, width: 1280, height: 720 } }] },
    });
    expect(estimate.body).toMatchObject({
      accepted: false,
      error: {
        code: 'insufficient_credits',
        message,
        details: { required_credits: 30, available_credits: 0, topup_url: TOPUP },
      },
    });

    const submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: account.apiKey,
      body: { inputs: [{ upload_id: await upload(api, account.apiKey, await sdrMp4({ width: 320, height: 180 })) }] },
    });
    expectError(api, submitted, 'insufficient_credits');
    expect(submitted.body.error).toMatchObject({
      message,
      details: { required_credits: expect.any(Number), available_credits: 0, topup_url: TOPUP },
    });
  });

  it('without BILLING_TOPUP_URL: topup_url is null and insufficient_credits keeps its catalogue message', async () => {
    const account = await createAccount(plain);
    expect((await call(plain, 'GET', '/v1/account/credits', { key: account.apiKey })).body.topup_url).toBeNull();
    const estimate = await call(plain, 'POST', '/v1/sdr2hdr/jobs/estimate', {
      key: account.apiKey,
      body: { inputs: [{ media: { duration_seconds: 30, width: 1280, height: 720 } }] },
    });
    expect(estimate.body.error.code).toBe('insufficient_credits');
    expect(estimate.body.error.details).toEqual({ required_credits: 30, available_credits: 0 });
    expect(estimate.body.error.message).not.toContain('http');
  });
});
