import { jobOfOutputKey, jobOfSegmentKey, outputKey, segmentsPrefix } from './storage';

describe('the job a stored key belongs to (what the sweeper keeps while the job is open)', () => {
  test('outputs, with and without a run', () => {
    expect(jobOfOutputKey(outputKey('acct_1', 'job_abc', 0, 'mp4'))).toBe('job_abc');
    expect(jobOfOutputKey(outputKey('acct_1', 'job_abc', 2, 'mp4', 'r7'))).toBe('job_abc');
    expect(jobOfOutputKey('uploads/acct_1/upl_1')).toBeNull();
  });

  test('segment parts: source, encoded and audio', () => {
    for (const name of ['src-0.mp4', 'enc-12.mp4', 'audio.mov'])
      expect(jobOfSegmentKey(`${segmentsPrefix('job_abc', 3)}${name}`)).toBe('job_abc');
    expect(jobOfSegmentKey('segments/job_abc/x/src-0.mp4')).toBeNull();
    expect(jobOfSegmentKey('segments/job_abc/0/')).toBeNull();
    expect(jobOfSegmentKey(outputKey('acct_1', 'job_abc', 0, 'mp4'))).toBeNull();
  });
});
