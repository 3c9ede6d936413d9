// Segment-parallel sdr2hdr's e2e files (test/jobs/segments.e2e-spec.ts: the join; segments-faults.e2e-spec.ts:
// cancel and SIGKILL), two files so that two Jest workers share them: each starts the real API and, per test,
// two worker processes of a region of its own (test/support/worker-fleet.ts); what both read of a job and
// its output is here.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { DataSource } from 'typeorm';
import { call, createAccount, type TestAccount, type TestApi } from './app';
import { startWorkerFleet, type WorkerFleet } from './worker-fleet';
import { pollUntil, type WorkerProcess } from './processes';

const exec = promisify(execFile);
export const GRANT = 10_000;
const FFPROBE = process.env.FFPROBE_PATH || 'ffprobe';
const FFMPEG = process.env.FFMPEG_PATH || 'ffmpeg';

async function ffprobeJson(file: string, args: string[]): Promise<any> {
  const { stdout } = await exec(FFPROBE, ['-v', 'error', ...args, '-of', 'json', file], { maxBuffer: 1 << 24 });
  return JSON.parse(stdout);
}

export async function streams(file: string): Promise<Record<string, string>[]> {
  const probe = await ffprobeJson(file, [
    '-show_entries',
    'stream=codec_type,codec_name,profile,pix_fmt,color_transfer,color_primaries,start_time,duration',
  ]);
  return probe.streams;
}

/** Luma SSIM of `a` against `b` (ffmpeg's ssim filter, Y plane). */
export async function lumaSsim(a: string, b: string): Promise<number> {
  const { stderr } = await exec(
    FFMPEG,
    ['-hide_banner', '-i', a, '-i', b, '-lavfi', '[0:v][1:v]ssim', '-f', 'null', '-'],
    {
      maxBuffer: 1 << 24,
    },
  );
  const match = /SSIM Y:([\d.]+)/.exec(stderr);
  if (!match) throw new Error(`no SSIM in: ${stderr.slice(-500)}`);
  return Number(match[1]);
}

export interface SegmentSuite {
  api(): TestApi;
  /** The current test's account (a new one per test: the money audit reads the account's whole ledger). */
  account(): TestAccount;
  db(): DataSource;
  /** Two worker processes of `region` splitting at 2 s, one unit at a time each. */
  twoWorkers(region: string): Promise<{ workers: WorkerProcess[]; ids: string[] }>;
  /** The segments whose ffmpeg runs in a worker's process group now. */
  segmentsRunning(worker: WorkerProcess, jobId: string): Promise<number[]>;
  outboxEvents(jobId: string): Promise<string[]>;
  submit(region: string, uploadId: string, output?: object): Promise<string>;
  segmentRows(jobId: string): Promise<{ segment: number; status: string; worker: string; attempts: number }[]>;
  /** Nothing of the job's temporary segments is left in the storage folder. */
  expectSegmentsGone(jobId: string): Promise<void>;
  /** Downloads `url` into the fleet's folder as `name`. */
  download(url: string, name: string): Promise<string>;
  /** The fleet's folder. */
  dir(): string;
}

/** Starts the fleet in `beforeAll` (closed in `afterAll`) and an account in each `beforeEach` of the calling describe. */
export function segmentSuite(name: string): SegmentSuite {
  let fleet: WorkerFleet;
  let account: TestAccount;

  beforeAll(async () => {
    fleet = await startWorkerFleet(name);
  }, 180_000);
  beforeEach(async () => {
    account = await createAccount(fleet.api, { plan: 'enterprise', credits: GRANT });
  });
  afterAll(() => fleet?.close(), 120_000);

  return {
    api: () => fleet.api,
    account: () => account,
    db: () => fleet.db,
    dir: () => fleet.dir,
    twoWorkers: (region) => fleet.twoWorkers(region, { SEGMENT_SECONDS: '2' }),
    segmentsRunning: (worker, jobId) => fleet.ffmpegRunning(worker, new RegExp(`mediajobs-${jobId}-0-s(\\d+)-`)),
    outboxEvents: (jobId) => fleet.outboxEvents(jobId),
    async submit(region, uploadId, output) {
      const submitted = await call(fleet.api, 'POST', '/v1/sdr2hdr/jobs', {
        key: account.apiKey,
        body: { inputs: [{ upload_id: uploadId }], region, output },
      });
      expect(submitted.status).toBe(202);
      return submitted.body.job_id as string;
    },
    segmentRows: (jobId) =>
      fleet.db.query(`SELECT segment, status, worker, attempts FROM item_segments WHERE job_id = $1 ORDER BY segment`, [
        jobId,
      ]),
    expectSegmentsGone: (jobId) => expectSegmentFilesGone(fleet, jobId),
    async download(url, name) {
      const response = await fetch(url);
      expect(response.status).toBe(200);
      const path = join(fleet.dir, name);
      await writeFile(path, Buffer.from(await response.arrayBuffer()));
      return path;
    },
  };
}

/**
 * Nothing of a split item's temporary files (the source's copy, the segments or a package's units) is left in
 * the fleet's storage once the item has ended.
 */
export async function expectSegmentFilesGone(fleet: Pick<WorkerFleet, 'dir'>, jobId: string): Promise<void> {
  const folder = join(fleet.dir, 'storage', 'segments', jobId);
  await pollUntil(
    'the temporary segment files to be removed',
    async () => {
      if (!existsSync(folder)) return true;
      const left = await readdir(folder, { recursive: true, withFileTypes: true });
      return left.every((entry) => !entry.isFile()) || undefined;
    },
    15_000,
    200,
  );
}
