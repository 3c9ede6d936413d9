// GET /v1/{api}/jobs/{id} reads the job and its items as one JSON value built by PostgreSQL
// (jobs.repository.ts, JOB_JSON): it must show exactly what the list (plain rows) shows, and the
// latest committed state on every read. Reads arriving together share one query (TurnBatch), and each
// still gets its own account's job only.
import { DataSource } from 'typeorm';
import { toErrorObject } from '../../src/common/errors';
import { call, createAccount, startApi, type TestAccount, type TestApi } from '../support/app';

describe('job read', () => {
  let api: TestApi;
  let db: DataSource;
  let account: TestAccount;

  beforeAll(async () => {
    api = await startApi({ REGION: 'read' });
    db = api.app.get(DataSource);
    account = await createAccount(api);
  });
  afterAll(() => api.close());

  const video = {
    codec: 'hevc',
    profile: 'main10',
    width: 1920,
    height: 1080,
    hdr: 'HDR10',
    transfer: 'smpte2084',
    primaries: 'bt2020',
  };
  const itemError = () =>
    toErrorObject('invalid_media', { requestId: 'req_read', docsUrl: api.config.docsUrl }, { details: { stream: 0 } });

  /** A finished job made by hand: timestamps with microseconds, an output, a failed item, big numbers. */
  async function finishedJob(owner: TestAccount = account): Promise<string> {
    const id = `job_read${Math.random().toString(36).slice(2, 12)}`;
    await db.query(
      `INSERT INTO jobs (id, account_id, api, status, region, output_options, metadata, estimated_credits,
                         charged_credits, billing_state, progress, request_id, created_at, started_at, finished_at, error)
       VALUES ($1, $2, 'sdr2hdr', 'partially_succeeded', 'read', '{}', '{"ref": "A-17"}', 9000000001, 4500000000,
               'settled', 0.25, 'req_read', now() - interval '1 hour 0.000999 seconds',
               now() - interval '59 minutes 0.5705 seconds', now() - interval '1.0009 seconds', NULL)`,
      [id, owner.accountId],
    );
    await db.query(
      `INSERT INTO job_items (job_id, index, status, source, duration_seconds, width, height, estimated_credits,
                              charged_credits, processed_seconds, output, error, worker)
       VALUES ($1, 0, 'succeeded', '{"type": "upload", "upload_id": "upl_read0"}', 12.345, 1920, 1080, 4500000000,
               4500000000, 12.345, $2, NULL, 'wkr_a'),
              ($1, 1, 'failed', '{"type": "url", "url": "https://example.com/b.mp4"}', 1.5, NULL, NULL, 4500000001,
               0, 0, NULL, $3, 'wkr_b')`,
      [id, { asset_id: 'ast_read0', size_bytes: 1234, container: 'mp4', video }, itemError()],
    );
    return id;
  }

  /** A view without its signed links (signed afresh, with a new expiry, on every read). */
  const unsigned = (job: any) => ({
    ...job,
    items: job.items.map((item: any) => ({
      ...item,
      output: item.output && {
        ...item.output,
        url: undefined,
        expires_at: undefined,
        light_map_url: undefined,
        light_map_expires_at: undefined,
      },
    })),
  });

  it('shows the same job as the list, timestamps to the millisecond as the database holds them', async () => {
    const id = await finishedJob();
    const read = await call(api, 'GET', `/v1/sdr2hdr/jobs/${id}`, { key: account.apiKey });
    const list = await call(api, 'GET', '/v1/sdr2hdr/jobs', { key: account.apiKey });
    expect(read.status).toBe(200);
    expect(unsigned(read.body)).toEqual(unsigned(list.body.data.find((job: any) => job.job_id === id)));

    const [stored] = await db.query(`SELECT created_at, started_at, finished_at FROM jobs WHERE id = $1`, [id]);
    expect(read.body).toMatchObject({
      status: 'partially_succeeded',
      created_at: stored.created_at.toISOString(),
      started_at: stored.started_at.toISOString(),
      finished_at: stored.finished_at.toISOString(),
      progress: 1,
      metadata: { ref: 'A-17' },
      billing: { estimated_credits: 9000000001, charged_credits: 4500000000, refunded: false, state: 'settled' },
      error: null,
    });
    expect(read.body.items).toEqual([
      {
        index: 0,
        status: 'succeeded',
        // Stored before uploads had names: filename null.
        source: { type: 'upload', upload_id: 'upl_read0', filename: null },
        duration_seconds: 12.345,
        decoded_duration_seconds: 12.345,
        warnings: [],
        width: 1920,
        height: 1080,
        output_width: 1920,
        output_height: 1080,
        estimated_credits: 4500000000,
        charged_credits: 4500000000,
        output: {
          asset_id: 'ast_read0',
          size_bytes: 1234,
          container: 'mp4',
          video,
          url: expect.stringContaining('/v1/assets/ast_read0'),
          expires_at: expect.any(String),
          // Stored before light maps (or none could be made): null, never a broken link.
          light_map_url: null,
          light_map_expires_at: null,
          light_map_frame_seconds: null,
        },
        error: null,
        worker: 'wkr_a',
        // Ended: no phase (items[i].phase describes work in progress).
        phase: null,
        // Written before output checks (a row of an earlier release): no checks, never null.
        checks: [],
      },
      {
        index: 1,
        status: 'failed',
        source: { type: 'url', url: 'https://example.com/b.mp4', filename: null },
        duration_seconds: 1.5,
        decoded_duration_seconds: null,
        warnings: [],
        width: null,
        height: null,
        output_width: null,
        output_height: null,
        estimated_credits: 4500000001,
        charged_credits: 0,
        output: null,
        error: itemError(),
        worker: 'wkr_b',
        phase: null,
        checks: [],
      },
    ]);
  });

  it('reflects each committed change on the next read', async () => {
    const id = await finishedJob();
    const read = async () => (await call(api, 'GET', `/v1/sdr2hdr/jobs/${id}`, { key: account.apiKey })).body;
    expect((await read()).items[1].status).toBe('failed');
    await db.query(`UPDATE job_items SET worker = 'wkr_c' WHERE job_id = $1 AND index = 1`, [id]);
    expect((await read()).items[1].worker).toBe('wkr_c');
    await db.query(`UPDATE jobs SET metadata = '{"ref": "B-2"}' WHERE id = $1`, [id]);
    expect((await read()).metadata).toEqual({ ref: 'B-2' });
  });

  it("reads arriving together each get their own account's job, and 404 for another account's", async () => {
    const other = await createAccount(api);
    const mine = [await finishedJob(), await finishedJob(), await finishedJob()];
    const theirs = [await finishedJob(other), await finishedJob(other), await finishedJob(other)];
    const reads = [
      ...mine.map((id) => ({ reader: account, id, owned: true })),
      ...theirs.map((id) => ({ reader: other, id, owned: true })),
      ...theirs.map((id) => ({ reader: account, id, owned: false })),
      ...mine.map((id) => ({ reader: other, id, owned: false })),
      { reader: account, id: 'job_doesnotexist0000000', owned: false },
    ];
    // Several rounds of all of them at once, in shuffled order, so many land in the same turn.
    for (let round = 0; round < 5; round++) {
      const order = [...reads, ...reads].sort(() => Math.random() - 0.5);
      const answers = await Promise.all(
        order.map(({ reader, id }) => call(api, 'GET', `/v1/sdr2hdr/jobs/${id}`, { key: reader.apiKey })),
      );
      order.forEach(({ id, owned }, n) => {
        if (owned) {
          expect(answers[n].status).toBe(200);
          expect(answers[n].body.job_id).toBe(id);
        } else {
          expect(answers[n].status).toBe(404);
          expect(answers[n].body.error.code).toBe('job_not_found');
        }
      });
    }
  });
});
