// The submits that arrive together share one transaction (src/jobs/job-admission.ts), and each is still
// answered as if it had been alone: its own refusal, its own job and hold, its own stored 202; one
// submit's failure never another's. The admissions are handed over in one turn here, as a burst of
// requests hands them over under load (the HTTP path is the same call: the submit-job use case).
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { AdminService } from '../../src/admin/admin.service';
import { SCOPES, type AuthContext } from '../../src/auth/auth-context';
import { PLAN_COLUMNS, planLimitsOf } from '../../src/auth/plan-limits';
import { ApiError } from '../../src/common/errors';
import { newId } from '../../src/common/ids';
import { IdempotencyRepository } from '../../src/common/idempotency/idempotency.repository';
import { JobAdmission, type Admission } from '../../src/jobs/job-admission';
import type { JobView } from '../../src/jobs/job-view';
import { outputSpec, resolveOutput } from '../../src/jobs/output-options';
import { call, createAccount, startApi, type TestAccount, type TestApi } from '../support/app';
import { pollUntil } from '../support/processes';
import { sqlSentDuring } from '../support/sql-sent';

/** Each test's own regions, so no other job in the database is counted in their queues. */
const region = (name: string): string => `admission-${name}-${Date.now()}`;

describe('the submits of one turn, admitted together', () => {
  let api: TestApi;
  let db: DataSource;

  beforeAll(async () => {
    api = await startApi({ MAX_QUEUE_DEPTH: '2', STORAGE_DIR: await mkdtemp(join(tmpdir(), 'mj-admission-')) });
    db = api.app.get(DataSource);
  });
  afterAll(() => api.close());

  /** The caller an API key of this account would make, on the account's plan (or another's limits). */
  async function callerOf(account: TestAccount, plan: Partial<AuthContext['plan']> = {}): Promise<AuthContext> {
    const [row] = await db.query<Record<string, unknown>[]>(
      `SELECT ${PLAN_COLUMNS} FROM accounts a JOIN plans p ON p.id = a.plan_id WHERE a.id = $1`,
      [account.accountId],
    );
    return {
      accountId: account.accountId,
      keyId: account.keyId,
      keyExpiresAt: null,
      scopes: [...SCOPES],
      plan: { ...planLimitsOf(row), ...plan },
      accountStatus: 'active',
      subscriptionStatus: 'active',
    };
  }

  /** A one-item sdr2hdr job of `credits` credits in `inRegion`. */
  function admission(caller: AuthContext, inRegion: string, credits = 2): Admission {
    return {
      caller,
      job: {
        id: newId('job'),
        accountId: caller.accountId,
        api: 'sdr2hdr',
        region: inRegion,
        outputOptions: resolveOutput({ api: 'sdr2hdr' }).output,
        outputSpec: outputSpec(resolveOutput({ api: 'sdr2hdr' })),
        metadata: {},
        estimatedCredits: credits,
        estimatedSeconds: 2,
        requestId: newId('req'),
        items: [
          {
            source: { type: 'upload', upload_id: 'upl_admission' },
            durationSeconds: 2,
            width: 320,
            height: 180,
            estimatedCredits: credits,
          },
        ],
      },
    };
  }

  /** Every admission handed over in this turn; each settles to its view or its error. */
  function admitInOneTurn(admissions: Admission[]): Promise<PromiseSettledResult<JobView>[]> {
    const admit = api.app.get(JobAdmission);
    return Promise.allSettled(admissions.map((one) => admit.admit(one)));
  }

  /** The transactions begun, and the account locks taken, while `work` runs. */
  async function transactionsDuring<T>(
    work: () => Promise<T>,
  ): Promise<{ result: T; begun: number; locks: string[][] }> {
    const { result, statements } = await sqlSentDuring(work);
    return {
      result,
      begun: statements.filter(({ text }) => text === 'START TRANSACTION').length,
      locks: statements
        .filter(({ text }) => /FROM accounts WHERE id = ANY.*FOR NO KEY UPDATE/s.test(text))
        .map(({ values }) => values[0] as string[]),
    };
  }

  async function balanceOf(account: TestAccount): Promise<{ available: number; held: number; running: number }> {
    const response = await call(api, 'GET', '/v1/account/credits', { key: account.apiKey });
    expect(response.status).toBe(200);
    return {
      available: response.body.available_credits,
      held: response.body.reserved_credits,
      running: response.body.running_jobs,
    };
  }

  const errorOf = (settled: PromiseSettledResult<JobView>): { code: string; details?: unknown } => {
    if (settled.status !== 'rejected') throw new Error(`admitted: ${JSON.stringify(settled.value)}`);
    const error = settled.reason as ApiError;
    expect(error).toBeInstanceOf(ApiError);
    return { code: error.code, details: error.details };
  };
  const viewOf = (settled: PromiseSettledResult<JobView>): JobView => {
    if (settled.status !== 'fulfilled') throw settled.reason;
    return settled.value;
  };

  it('one transaction for the accounts of a turn; each submit gets its own answer, refusals change nothing', async () => {
    const admin = api.app.get(AdminService);
    const accounts: Record<'rich' | 'alsoRich' | 'poor' | 'busy' | 'lapsed', TestAccount> = {
      rich: await createAccount(api, { plan: 'enterprise', credits: 100 }),
      alsoRich: await createAccount(api, { plan: 'enterprise', credits: 100 }),
      poor: await createAccount(api, { plan: 'enterprise', credits: 1 }),
      busy: await createAccount(api, { plan: 'enterprise', credits: 100 }),
      lapsed: await createAccount(api, { plan: 'enterprise', credits: 100 }),
    };
    // `busy` runs a job already, and its callers' plan allows one at a time.
    const busyCaller = await callerOf(accounts.busy, { concurrentJobs: 1 });
    expect(viewOf((await admitInOneTurn([admission(busyCaller, region('busy'))]))[0]).status).toBe('queued');
    // `lapsed` stopped paying after its key was checked: the locked row says so.
    const lapsedCaller = await callerOf(accounts.lapsed);
    await admin.patchAccount(accounts.lapsed.accountId, { subscription_status: 'payment_failed' });
    const richCaller = await callerOf(accounts.rich);
    const admissions = [
      admission(richCaller, region('rich')),
      admission(await callerOf(accounts.alsoRich), region('also-rich')),
      admission(await callerOf(accounts.poor), region('poor')),
      admission(busyCaller, region('busy-again')),
      admission(lapsedCaller, region('lapsed')),
      // The same account again: in a transaction of its own, after the first's lock.
      admission(richCaller, region('rich-again')),
    ];
    const before = await balanceOf(accounts.poor);

    const { result, begun, locks } = await transactionsDuring(() => admitInOneTurn(admissions));

    // One shared transaction for the five accounts; the same account again waits for its row on its own
    // (and should it take the row first, the first submit follows it on its own too).
    const shared = locks.filter((ids) => ids.length > 1);
    expect(shared.map((ids) => [...ids].sort())).toEqual([
      admissions
        .slice(0, 5)
        .map(({ job }) => job.accountId)
        .sort(),
    ]);
    expect(locks.filter((ids) => ids.length === 1)).toEqual(
      locks.length === 2 ? [[accounts.rich.accountId]] : [[accounts.rich.accountId], [accounts.rich.accountId]],
    );
    expect(begun).toBe(locks.length);
    const [rich, alsoRich, poor, busy, lapsed, richAgain] = result;
    for (const [n, admitted] of [rich, alsoRich, richAgain].entries()) {
      const view = viewOf(admitted);
      expect(view.job_id).toBe(admissions[[0, 1, 5][n]].job.id);
      expect([view.status, view.billing.estimated_credits, view.billing.state]).toEqual(['queued', 2, 'authorised']);
    }
    expect(errorOf(poor)).toEqual({
      code: 'insufficient_credits',
      details: { required_credits: 2, available_credits: 1 },
    });
    expect(errorOf(busy)).toEqual({
      code: 'concurrency_limit_exceeded',
      details: { concurrency_limit: 1, running_jobs: 1 },
    });
    expect(errorOf(lapsed).code).toBe('payment_failed');

    // What each owner sees: two holds and two running jobs for `rich`, one each for `alsoRich`; the
    // refused accounts as they were.
    expect(await balanceOf(accounts.rich)).toEqual({ available: 96, held: 4, running: 2 });
    expect(await balanceOf(accounts.alsoRich)).toEqual({ available: 98, held: 2, running: 1 });
    expect(await balanceOf(accounts.poor)).toEqual(before);
    expect(await balanceOf(accounts.busy)).toEqual({ available: 98, held: 2, running: 1 });
    expect(await balanceOf(accounts.lapsed)).toEqual({ available: 100, held: 0, running: 0 });
    for (const account of [accounts.rich, accounts.alsoRich]) {
      const ledger = await call(api, 'GET', '/v1/account/ledger', { key: account.apiKey });
      const jobs = await call(api, 'GET', '/v1/sdr2hdr/jobs', { key: account.apiKey });
      const held = (ledger.body.data as { kind: string; job_id: string }[]).filter(
        (entry) => entry.kind === 'authorise',
      );
      expect(held.map((entry) => entry.job_id).sort()).toEqual(
        (jobs.body.data as JobView[]).map((job) => job.job_id).sort(),
      );
    }
  });

  it("counts the jobs admitted before it in the transaction in each submit's queue depth", async () => {
    const shared = region('queue');
    const admissions = await Promise.all(
      [1, 2, 3, 4].map(async () =>
        admission(await callerOf(await createAccount(api, { plan: 'enterprise', credits: 10 })), shared),
      ),
    );
    const { result, begun } = await transactionsDuring(() => admitInOneTurn(admissions));
    expect(begun).toBe(1);
    // MAX_QUEUE_DEPTH is 2 in this file: the third and fourth found the queue full.
    expect(
      result.map((settled) => (settled.status === 'fulfilled' ? settled.value.status : errorOf(settled).code)),
    ).toEqual(['queued', 'queued', 'queue_full', 'queue_full']);
    const [{ count }] = await db.query<{ count: number }[]>(
      `SELECT count(*)::int AS count FROM jobs WHERE region = $1 AND status = 'queued'`,
      [shared],
    );
    expect(count).toBe(2);
  });

  it('a submit whose Idempotency-Key was taken over fails alone: the others are admitted, nothing of it stays', async () => {
    const idempotency = api.app.get(IdempotencyRepository);
    const accounts = await Promise.all([1, 2, 3].map(() => createAccount(api, { plan: 'enterprise', credits: 10 })));
    const admissions = await Promise.all(
      accounts.map(async (account, n) => {
        const one = admission(await callerOf(account), region(`keys-${n}`));
        const key = `key-${n}`;
        expect(await idempotency.claim(account.accountId, key, `hash-${n}`)).not.toBeNull();
        return { ...one, idempotency: { accountId: account.accountId, key, requestHash: `hash-${n}` } };
      }),
    );
    // The second's claim went to a retry with another body (as a takeover after 60 s leaves it).
    await db.query(`UPDATE idempotency_keys SET request_hash = 'a retry' WHERE account_id = $1 AND key = 'key-1'`, [
      accounts[1].accountId,
    ]);

    const { result, begun } = await transactionsDuring(() => admitInOneTurn(admissions));

    // The shared transaction rolled back at the stored answers, and each ran again on its own.
    expect(begun).toBe(4);
    expect(viewOf(result[0]).status).toBe('queued');
    expect(errorOf(result[1]).code).toBe('resource_locked');
    expect(viewOf(result[2]).status).toBe('queued');
    expect(await balanceOf(accounts[1])).toEqual({ available: 10, held: 0, running: 0 });
    const [{ jobs }] = await db.query<{ jobs: number }[]>(
      `SELECT count(*)::int AS jobs FROM jobs WHERE account_id = $1`,
      [accounts[1].accountId],
    );
    expect(jobs).toBe(0);
    // The others' 202s are stored, and a retry of the first is answered with its job.
    const stored = await db.query<{ key: string; state: string; job_id: string }[]>(
      `SELECT key, state, response_body->>'job_id' AS job_id FROM idempotency_keys
        WHERE account_id = ANY($1) ORDER BY key`,
      [accounts.map((account) => account.accountId)],
    );
    expect(stored).toEqual([
      { key: 'key-0', state: 'done', job_id: admissions[0].job.id },
      { key: 'key-1', state: 'in_flight', job_id: null },
      { key: 'key-2', state: 'done', job_id: admissions[2].job.id },
    ]);
  });

  it("an account whose row another transaction holds waits on its own: the others' submits do not wait for it", async () => {
    const accounts = await Promise.all([1, 2, 3].map(() => createAccount(api, { plan: 'enterprise', credits: 10 })));
    const admissions = await Promise.all(
      accounts.map(async (account, n) => admission(await callerOf(account), region(`held-${n}`))),
    );
    // A settlement (or a grant) of the first account, still open.
    const holder = new Client({ connectionString: api.config.databaseUrl });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM accounts WHERE id = $1 FOR NO KEY UPDATE`, [accounts[0].accountId]);
      const answered: string[] = [];
      const admit = api.app.get(JobAdmission);
      const settled = Promise.allSettled(
        admissions.map((one, n) => admit.admit(one).finally(() => answered.push(`account ${n}`))),
      );
      // The other two are admitted while the first account's row is held…
      for (let waited = 0; answered.length < 2; waited += 20) {
        if (waited > 5_000) throw new Error(`answered while the row was held: ${answered.join(', ') || 'none'}`);
        await new Promise((next) => setTimeout(next, 20));
      }
      expect(answered.sort()).toEqual(['account 1', 'account 2']);
      // …and the first waits for it, in a transaction of its own, then is admitted. Its wait may begin a
      // moment after the others answered (a busy machine), so it is polled for.
      expect(
        await pollUntil(
          'the first account to wait for its row',
          async () => (await lockWaiters(holder)) || undefined,
          10_000,
          20,
        ),
      ).toBe(1);
      await holder.query('COMMIT');
      const result = await settled;
      expect(result.map((one) => viewOf(one).status)).toEqual(['queued', 'queued', 'queued']);
    } finally {
      await holder.end();
    }
    expect(await balanceOf(accounts[0])).toEqual({ available: 8, held: 2, running: 1 });
  });

  it("an account's next submit, while one of its submits is being admitted, waits on its own without a shared try", async () => {
    const account = await createAccount(api, { plan: 'enterprise', credits: 10 });
    const caller = await callerOf(account);
    const holder = new Client({ connectionString: api.config.databaseUrl });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM accounts WHERE id = $1 FOR NO KEY UPDATE`, [account.accountId]);
      const admit = api.app.get(JobAdmission);
      const { result, begun } = await transactionsDuring(async () => {
        // The first tries a shared transaction, finds the row held, and waits in one of its own…
        const first = admit.admit(admission(caller, region('next-1')));
        for (let waited = 0; (await lockWaiters(holder)) < 1; waited += 20) {
          if (waited > 5_000) throw new Error('the first submit never waited for the lock');
          await new Promise((next) => setTimeout(next, 20));
        }
        // …and the second, arriving meanwhile, goes straight to a transaction of its own.
        const second = admit.admit(admission(caller, region('next-2')));
        for (let waited = 0; (await lockWaiters(holder)) < 2; waited += 20) {
          if (waited > 5_000) throw new Error('the second submit never waited for the lock');
          await new Promise((next) => setTimeout(next, 20));
        }
        await holder.query('COMMIT');
        return Promise.all([first, second]);
      });
      expect(result.map((view) => view.status)).toEqual(['queued', 'queued']);
      expect(begun).toBe(3);
    } finally {
      await holder.end();
    }
    expect(await balanceOf(account)).toEqual({ available: 6, held: 4, running: 2 });
  });
});

/** The transactions waiting, directly or behind another waiter, for a lock `holder` holds. */
async function lockWaiters(holder: Client): Promise<number> {
  // Within `holder`'s transaction PostgreSQL shows the activity as first seen there; look again.
  await holder.query('SELECT pg_stat_clear_snapshot()');
  const { rows } = await holder.query<{ waiting: number }>(
    `WITH RECURSIVE waiting(pid) AS (
       SELECT pid FROM pg_stat_activity WHERE pg_backend_pid() = ANY(pg_blocking_pids(pid))
       UNION
       SELECT activity.pid FROM pg_stat_activity activity JOIN waiting ON waiting.pid = ANY(pg_blocking_pids(activity.pid))
     )
     SELECT count(*)::int AS waiting FROM waiting`,
  );
  return rows[0].waiting;
}
