import { itemProcessingSeconds, itemWork, jobProcessingSeconds, packageProcessingSeconds } from './processing-time';

/** Items that run whole (no segments), of these processing seconds each. */
const whole = (...seconds: number[]) => seconds.map((each) => itemWork('sdr2hdr', 10, each, 60));

describe('itemProcessingSeconds (docs/media.md speeds)', () => {
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

describe('packageProcessingSeconds (every rung of one ffmpeg run)', () => {
  const rung = (codec: 'hevc' | 'av1' | 'h264', width: number, height: number) => ({ codec, width, height });
  const file = (width: number, height: number, preset?: 'ultrafast') =>
    itemProcessingSeconds('sdr2hdr', { durationSeconds: 10, width, height }, undefined, preset);

  it('an HEVC rung costs its picture as a file does; the overhead is paid once', () => {
    expect(packageProcessingSeconds(10, [rung('hevc', 1920, 1080)])).toBe(file(1920, 1080));
    expect(packageProcessingSeconds(10, [rung('hevc', 1920, 1080), rung('hevc', 640, 360)])).toBe(
      file(1920, 1080) + file(640, 360) - 1,
    );
    expect(packageProcessingSeconds(10, [rung('hevc', 1920, 1080)], 'ultrafast')).toBe(file(1920, 1080, 'ultrafast'));
  });

  it('H.264 rungs cost less than HEVC ones, AV1 rungs more, whatever the x265 preset', () => {
    const hevc = packageProcessingSeconds(10, [rung('hevc', 1280, 720)]);
    expect(packageProcessingSeconds(10, [rung('h264', 1280, 720)])).toBeLessThan(hevc / 2);
    expect(packageProcessingSeconds(10, [rung('av1', 1280, 720)])).toBeGreaterThan(hevc * 1.4);
    expect(packageProcessingSeconds(10, [rung('av1', 1280, 720)], 'ultrafast')).toBe(
      packageProcessingSeconds(10, [rung('av1', 1280, 720)]),
    );
  });
});

describe('jobProcessingSeconds (items spread over the region’s workers)', () => {
  it('one worker runs the items one after another: the sum', () => {
    expect(jobProcessingSeconds(whole(3, 3, 5), 1)).toBe(11);
  });

  it('as many workers as items: the longest item', () => {
    expect(jobProcessingSeconds(whole(3, 8, 5), 3)).toBe(8);
    expect(jobProcessingSeconds(whole(3, 8, 5), 10)).toBe(8);
  });

  it('fewer workers than items: each free worker takes the next item in order', () => {
    // Worker A: 3 then 5 (ends at 8); worker B: 4 then 2 (ends at 6).
    expect(jobProcessingSeconds(whole(3, 4, 5, 2), 2)).toBe(8);
  });

  it('no live worker counts as one (the region would be refused as unavailable first); no item is 0', () => {
    expect(jobProcessingSeconds(whole(2, 2), 0)).toBe(4);
    expect(jobProcessingSeconds(whole(), 4)).toBe(0);
  });
});

describe('itemWork (a long sdr2hdr item in segments, as the worker splits it)', () => {
  it('an item shorter than twice SEGMENT_SECONDS, an audio item, or SEGMENT_SECONDS=0 stays one unit', () => {
    expect(itemWork('sdr2hdr', 119, 500, 60)).toEqual({ units: [500], serialSeconds: 0 });
    expect(itemWork('audio', 600, 31, 60)).toEqual({ units: [31], serialSeconds: 0 });
    expect(itemWork('sdr2hdr', 600, 1000, 0)).toEqual({ units: [1000], serialSeconds: 0 });
    expect(itemWork('sdr2hdr', 119, 500, 60, 4)).toEqual({ units: [500], serialSeconds: 0 });
  });

  it('a package is cut into units of whole HLS segments: 20 s at SEGMENT_SECONDS=10 and 4 s segments is 8 + 12 s', () => {
    // Units round SEGMENT_SECONDS down to whole segments (8 s); the last, 4 s, is not shorter than half a
    // unit, so it stays; 21 s of encode + 1 s overhead shares out by duration.
    const work = itemWork('sdr2hdr', 20, 21, 10, 4);
    expect(work.units).toEqual([1 + 8, 1 + 8, 1 + 4]);
    expect(work.serialSeconds).toBe(1);
    expect(jobProcessingSeconds([work], 2)).toBeLessThan(jobProcessingSeconds([work], 1));
  });

  it('a 10-minute item at SEGMENT_SECONDS=60: ten segments sharing the encode, each with its own overhead, plus split and join', () => {
    // 1,001 s on one worker: 1 s of overhead and 1,000 s of encode, 100 s per 60 s segment.
    const work = itemWork('sdr2hdr', 600, 1001, 60);
    expect(work.units).toEqual(new Array(10).fill(101));
    expect(work.serialSeconds).toBe(12); // 0.02 s per second of video
    // One worker runs the segments one after another; four run them 3, 3, 2, 2; sixteen, one each.
    expect(jobProcessingSeconds([work], 1)).toBe(1010 + 12);
    expect(jobProcessingSeconds([work], 4)).toBe(3 * 101 + 12);
    expect(jobProcessingSeconds([work], 16)).toBe(101 + 12);
  });

  it('the last segment is never shorter than half of one: 140 s at 60 is two segments, of 60 and 80 s', () => {
    const work = itemWork('sdr2hdr', 140, 281, 60);
    expect(work.units).toEqual([1 + 120, 1 + 160]);
  });

  it("a segmented item's segments and the job's other items share the workers", () => {
    // Two segments of 51 s and a whole item of 30 s on two workers: 51 | 51 + 30, plus the split and join.
    const segmented = itemWork('sdr2hdr', 240, 101, 120);
    expect(segmented.units).toEqual([51, 51]);
    expect(jobProcessingSeconds([segmented, ...whole(30)], 2)).toBe(81 + 5);
  });
});
