import type { Job } from 'bullmq';
import { queueDispatcher, type MediaJobData, type QueueHandlers } from './catalogue';
import { MEDIA_JOB_ATTEMPTS, MEDIA_JOB_MAX_STALLS, mediaBackoffMs } from './retry-policy';

describe('queue catalogue', () => {
  it('stops start-up when a job name of the queue has no handler, saying what to add where', () => {
    const incomplete = {} as QueueHandlers<'media'>;
    expect(() => queueDispatcher('media', incomplete, 'MediaWorker')).toThrow(
      'No handler for media queue job(s) process-job, process-item, process-segment: add one in MediaWorker',
    );
  });

  it('runs a job by its name and fails one whose name is not in the catalogue', async () => {
    const seen: string[] = [];
    const dispatch = queueDispatcher(
      'media',
      {
        'process-job': async (job) => void seen.push(job.data.jobId),
        'process-item': async (job) => void seen.push(`${job.data.jobId}.${job.data.index}`),
        'process-segment': async (job) => void seen.push(`${job.data.jobId}.${job.data.index}.s${job.data.segment}`),
      },
      'MediaWorker',
    );
    await dispatch({ name: 'process-job', data: { jobId: 'job_1' } } as Job<MediaJobData>);
    await dispatch({ name: 'process-item', data: { jobId: 'job_1', index: 2 } } as Job<MediaJobData>);
    await dispatch({ name: 'process-segment', data: { jobId: 'job_1', index: 2, segment: 3 } } as Job<MediaJobData>);
    expect(seen).toEqual(['job_1', 'job_1.2', 'job_1.2.s3']);
    await expect(dispatch({ name: 'transcode', data: { jobId: 'job_2' } } as Job<MediaJobData>)).rejects.toThrow(
      'Unknown media queue job "transcode"',
    );
  });
});

describe('media job retry policy', () => {
  it('waits 0.5–1 s before the second attempt, doubling up to a 10 s cap however long an outage lasts', () => {
    const ceilings = [1, 2, 3, 4, 5, 10, 1000].map((attempt) =>
      Math.max(...Array.from({ length: 200 }, () => mediaBackoffMs(attempt))),
    );
    expect(ceilings.every((ms, i) => ms <= [1000, 2000, 4000, 8000, 10_000, 10_000, 10_000][i])).toBe(true);
    for (let i = 0; i < 200; i++) expect(mediaBackoffMs(1)).toBeGreaterThanOrEqual(500);
    expect(Math.min(...Array.from({ length: 200 }, () => mediaBackoffMs(1000)))).toBeGreaterThanOrEqual(5000);
  });

  it('no outage can reach BullMQ’s attempt or stall limits: ten days at the cap is far below them', () => {
    const tenDaysOfAttempts = (10 * 86_400_000) / 5000;
    expect(MEDIA_JOB_ATTEMPTS).toBeGreaterThan(tenDaysOfAttempts);
    expect(MEDIA_JOB_MAX_STALLS).toBeGreaterThan(tenDaysOfAttempts);
  });
});
