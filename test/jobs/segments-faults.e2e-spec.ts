// Segment-parallel sdr2hdr under faults (SEGMENT_SECONDS, docs/api-decisions.md §11): the real API, two worker
// processes, real ffmpeg. A cancel stops every segment; a segment whose worker is SIGKILLed is retried alone;
// the temporary segments are gone afterwards. The join itself: test/jobs/segments.e2e-spec.ts (two files, so
// that two Jest workers share them).
import { keyframedSdrMp4 } from '../fixtures/media';
import { call } from '../support/app';
import { upload, waitForJob } from '../support/jobs';
import { decodedFrameCount } from '../support/media-checks';
import { auditMoney, pollUntil, sleep } from '../support/processes';
import { GRANT, segmentSuite } from '../support/segment-suite';

describe('segment-parallel sdr2hdr under faults', () => {
  const suite = segmentSuite('segment-faults');
  const { twoWorkers, submit, segmentRows, segmentsRunning, outboxEvents, expectSegmentsGone, download } = suite;

  it('cancel stops every running segment within seconds; charged 0, released once; segments removed', async () => {
    const region = 'seg-cancel';
    const { workers } = await twoWorkers(region);
    // 1280×720: size is the point — both workers must be caught encoding a segment before the cancel.
    const source = await keyframedSdrMp4({ width: 1280, height: 720, seconds: 10, audio: false });
    const jobId = await submit(region, await upload(suite.api(), suite.account().apiKey, source));

    await pollUntil(
      'both workers to encode a segment of the job',
      async () =>
        (await Promise.all(workers.map((worker) => segmentsRunning(worker, jobId)))).every((run) => run.length),
      120_000,
      50,
    );
    const cancelled = await call(suite.api(), 'POST', `/v1/sdr2hdr/jobs/${jobId}/cancel`, {
      key: suite.account().apiKey,
    });
    expect(cancelled.status).toBe(200);

    await pollUntil(
      'every ffmpeg of the job to stop',
      async () =>
        (await Promise.all(workers.map((worker) => segmentsRunning(worker, jobId)))).every((run) => !run.length),
      10_000,
      50,
    );
    await sleep(3000);
    // The segments still queued never start.
    expect(await Promise.all(workers.map((worker) => segmentsRunning(worker, jobId)))).toEqual([[], []]);

    const job = (await call(suite.api(), 'GET', `/v1/sdr2hdr/jobs/${jobId}`, { key: suite.account().apiKey })).body;
    expect(job).toMatchObject({
      status: 'cancelled',
      billing: { charged_credits: 0, refunded: true, state: 'released' },
    });
    expect((await auditMoney(suite.api(), suite.account().apiKey, [job], GRANT)).problems).toEqual([]);
    expect(await outboxEvents(jobId)).toEqual(['job.cancelled']);
    await expectSegmentsGone(jobId);
    for (const worker of workers) worker.assertAlive();
  }, 400_000);

  it('a worker SIGKILLed mid-segment: that segment alone is encoded again, the job succeeds, charged once', async () => {
    const region = 'seg-kill';
    const { workers, ids } = await twoWorkers(region);
    const [doomed, survivor] = workers;
    // 320×180, not the join's 160×90: here size is the point — its five 2 s segments must each take a worker
    // long enough to be caught mid-segment; what is tested is the retry, not the picture.
    const source = await keyframedSdrMp4({ width: 320, height: 180, seconds: 10 });
    const jobId = await submit(region, await upload(suite.api(), suite.account().apiKey, source));

    const cut = await pollUntil(
      'the first worker to encode a segment of the job',
      async () => {
        const running = await segmentsRunning(doomed, jobId);
        return running.length ? running[0] : undefined;
      },
      120_000,
      50,
    );
    await doomed.kill();

    const job = await waitForJob(suite.api(), suite.account().apiKey, `/v1/sdr2hdr/jobs/${jobId}`, undefined, 240_000);
    expect(job.status).toBe('succeeded');
    const segments = await segmentRows(jobId);
    const again = segments.find((segment) => segment.segment === cut)!;
    expect(again).toMatchObject({ status: 'succeeded', worker: ids[1] });
    expect(again.attempts).toBeGreaterThanOrEqual(2);
    // Retried alone: every other segment was encoded once.
    expect(segments.filter((segment) => segment.segment !== cut).every((segment) => segment.attempts === 1)).toBe(true);

    const output = await download(job.items[0].output.url, `${jobId}.mp4`);
    expect(await decodedFrameCount(output)).toBe(await decodedFrameCount(source));
    expect((await auditMoney(suite.api(), suite.account().apiKey, [job], GRANT)).problems).toEqual([]);
    expect(await outboxEvents(jobId)).toEqual(['job.succeeded']);
    await expectSegmentsGone(jobId);
    survivor.assertAlive();
  }, 400_000);
});
