import { jobOfOutputKey, jobOfSegmentKey, outputKey, packageOfKey, packagePrefix, segmentsPrefix } from './storage';

describe('the job a stored key belongs to (what the sweeper keeps while the job is open)', () => {
  test('outputs, with and without a run', () => {
    expect(jobOfOutputKey(outputKey('acct_1', 'job_abc', 0, 'mp4'))).toBe('job_abc');
    expect(jobOfOutputKey(outputKey('acct_1', 'job_abc', 2, 'mp4', 'r7'))).toBe('job_abc');
    expect(jobOfOutputKey('uploads/acct_1/upl_1')).toBeNull();
  });

  test("a package's objects belong to its job and to its prefix (the asset's key)", () => {
    const prefix = packagePrefix('acct_1', 'job_abc', 1, 'r7');
    for (const name of ['master.m3u8', 'hevc-1080-pq/init.mp4', 'h264-720-sdr/seg-00012.m4s', 'audio/playlist.m3u8']) {
      expect(jobOfOutputKey(`${prefix}${name}`)).toBe('job_abc');
      expect(packageOfKey(`${prefix}${name}`)).toBe(prefix);
    }
    expect(packageOfKey(outputKey('acct_1', 'job_abc', 0, 'mp4'))).toBeNull();
    expect(packageOfKey(prefix)).toBeNull();
  });

  test('segment parts: source, encoded and audio', () => {
    for (const name of ['src-0.mp4', 'enc-12.mp4', 'audio.mov'])
      expect(jobOfSegmentKey(`${segmentsPrefix('job_abc', 3)}${name}`)).toBe('job_abc');
    expect(jobOfSegmentKey('segments/job_abc/x/src-0.mp4')).toBeNull();
    expect(jobOfSegmentKey('segments/job_abc/0/')).toBeNull();
    expect(jobOfSegmentKey(outputKey('acct_1', 'job_abc', 0, 'mp4'))).toBeNull();
  });
});
