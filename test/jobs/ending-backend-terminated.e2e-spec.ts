// A PostgreSQL backend terminated in the middle of an item's ending (issue 36 item 15): the operator's
// pg_terminate_backend, a failover, PgBouncer losing its server connection. Between two statements of the
// ending's transaction the driver learns of it only as "Query runner already released"; that is an outage
// like any lost connection, so the ending waits it out and commits on a new connection — the item is
// encoded once and the job charged once, directly and through PgBouncer. A real API and worker, real
// ffmpeg; the termination is timed from outside (test/support/idle-backend-kill.ts).
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { sdrMp4 } from '../fixtures/media';
import { call, createAccount } from '../support/app';
import { markRegionHealthy } from '../support/chaos-accounts';
import { IdleBackendKiller } from '../support/idle-backend-kill';
import { upload, waitForJob } from '../support/jobs';
import { PrivatePgBouncer } from '../support/pgbouncer';
import { auditMoney } from '../support/processes';
import { startStack } from '../support/worker';

const database = process.env.TEST_DATABASE!;

/** A one-item job run by a real worker whose ending's backend is terminated mid-transaction, through `databaseUrl`. */
async function endThroughTermination(region: string, env: Record<string, string>) {
  const stack = await startStack({
    REGION: region,
    STORAGE_DIR: await mkdtemp(join(tmpdir(), `mj-${region}-`)),
    ...env,
  });
  const killer = await IdleBackendKiller.connect(database);
  try {
    const { api } = stack;
    await markRegionHealthy(api, region);
    const granted = 1000;
    const account = await createAccount(api, { credits: granted });
    const uploadId = await upload(
      api,
      account.apiKey,
      await sdrMp4({ width: 160, height: 90, seconds: 2, audio: false }),
    );
    // The account's row, held from just after the submit: the ending's first statement that touches it (the
    // output asset's foreign key) waits there, mid-transaction, with the job's lock taken and its item written.
    const submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: account.apiKey,
      body: { inputs: [{ upload_id: uploadId }] },
    });
    expect(submitted.status).toBe(202);
    await killer.hold(`SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE`, [account.accountId]);
    const state = await killer.killWaiter();
    expect(state).toBe('idle in transaction');

    const jobId = submitted.body.job_id as string;
    const job = await waitForJob(api, account.apiKey, `/v1/sdr2hdr/jobs/${jobId}`, undefined, 120_000);
    expect(job.status).toBe('succeeded');
    expect((await auditMoney(api, account.apiKey, [job], granted)).problems).toEqual([]);
    // Taken (and so encoded) once: a second take would be the item run again.
    const [{ attempts }] = await api.app.get(DataSource).query(`SELECT attempts FROM jobs WHERE id = $1`, [jobId]);
    expect(attempts).toBe(1);
  } finally {
    await killer.close();
    await stack.close();
  }
}

describe('an ending whose PostgreSQL backend is terminated between two statements', () => {
  it('directly: the ending waits the outage out; encoded once, charged once', async () => {
    await endThroughTermination('ending-kill-direct', {});
  }, 300_000);

  it('through PgBouncer (transaction pooling): the same', async () => {
    const bouncer = await PrivatePgBouncer.start({ poolSize: 5 });
    try {
      await endThroughTermination('ending-kill-pgb', {
        DATABASE_URL: bouncer.url(database),
        DATABASE_POOL_MODE: 'transaction',
      });
    } finally {
      await bouncer.dispose();
    }
  }, 300_000);
});
