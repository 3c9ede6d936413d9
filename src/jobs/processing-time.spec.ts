import { itemProcessingSeconds, jobProcessingSeconds } from './processing-time';

describe('itemProcessingSeconds (MEDIA.md speeds)', () => {
  it('reproduces the measured points it was fitted through, plus one second of overhead', () => {
    // veryfast: 10 s 640×360 took 6.5 s, 10 s 1920×1080 took 35 s.
    expect(itemProcessingSeconds('sdr2hdr', { durationSeconds: 10, width: 640, height: 360 })).toBe(8);
    expect(itemProcessingSeconds('sdr2hdr', { durationSeconds: 10, width: 1920, height: 1080 })).toBe(36);
    expect(
      itemProcessingSeconds('sdr2hdr', { durationSeconds: 10, width: 1920, height: 1080 }, undefined, 'ultrafast'),
    ).toBe(22);
  });

  it('prices the output picture: a 720p request of a 1080p source costs the 720p time; never upscales', () => {
    const source = { durationSeconds: 10, width: 1920, height: 1080 };
    const at720 = itemProcessingSeconds('sdr2hdr', source, 720);
    expect(at720).toBe(itemProcessingSeconds('sdr2hdr', { durationSeconds: 10, width: 1280, height: 720 }));
    expect(at720).toBeLessThan(itemProcessingSeconds('sdr2hdr', source));
    expect(itemProcessingSeconds('sdr2hdr', source, 2160)).toBe(itemProcessingSeconds('sdr2hdr', source));
    // Portrait: the short side is scaled.
    expect(itemProcessingSeconds('sdr2hdr', { durationSeconds: 10, width: 1080, height: 1920 }, 720)).toBe(at720);
  });

  it('audio is fast: about a second per item for short speech', () => {
    expect(itemProcessingSeconds('audio', { durationSeconds: 8, width: null, height: null })).toBe(2);
    expect(itemProcessingSeconds('audio', { durationSeconds: 0, width: null, height: null })).toBe(1);
  });
});

describe('jobProcessingSeconds (items spread over the region’s workers)', () => {
  it('one worker runs the items one after another: the sum', () => {
    expect(jobProcessingSeconds([3, 3, 5], 1)).toBe(11);
  });

  it('as many workers as items: the longest item', () => {
    expect(jobProcessingSeconds([3, 8, 5], 3)).toBe(8);
    expect(jobProcessingSeconds([3, 8, 5], 10)).toBe(8);
  });

  it('fewer workers than items: each free worker takes the next item in order', () => {
    // Worker A: 3 then 5 (ends at 8); worker B: 4 then 2 (ends at 6).
    expect(jobProcessingSeconds([3, 4, 5, 2], 2)).toBe(8);
  });

  it('no live worker counts as one (the region would be refused as unavailable first); no item is 0', () => {
    expect(jobProcessingSeconds([2, 2], 0)).toBe(4);
    expect(jobProcessingSeconds([], 4)).toBe(0);
  });
});
