import type { Job } from 'bullmq';
import { queueDispatcher, type MediaJobData, type QueueHandlers } from './queues';

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
