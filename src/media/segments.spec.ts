import { planSegments } from './segment-plan';
import { buildJoinArgs, buildSplitArgs, concatList, parseKeyframeTimes } from './segments';

describe('segment plan', () => {
  const everySecond = Array.from({ length: 10 }, (_, i) => i);

  it('cuts at the first keyframe at least a segment after the previous cut', () => {
    expect(planSegments(everySecond, 10, 2)).toEqual([
      { start: 0, duration: 2 },
      { start: 2, duration: 2 },
      { start: 4, duration: 2 },
      { start: 6, duration: 2 },
      { start: 8, duration: 2 },
    ]);
    expect(planSegments([0, 1.5, 2.5, 3, 5.2, 7], 9, 2)).toEqual([
      { start: 0, duration: 2.5 },
      { start: 2.5, duration: 2.7 },
      { start: 5.2, duration: 3.8 },
    ]);
  });

  it('never leaves a last segment shorter than half a segment', () => {
    expect(planSegments(everySecond, 9.5, 3)).toEqual([
      { start: 0, duration: 3 },
      { start: 3, duration: 3 },
      { start: 6, duration: 3.5 },
    ]);
  });

  it('is one segment (no split) without keyframes to cut at, or when splitting is off', () => {
    expect(planSegments([0, 8.33], 9, 2)).toEqual([{ start: 0, duration: 9 }]);
    expect(planSegments(everySecond, 10, 0)).toEqual([{ start: 0, duration: 10 }]);
  });

  it('reads ffprobe keyframe times, ignoring empty fields', () => {
    expect(parseKeyframeTimes('0.000000,\n1.000000\n\n2.002000,2.002000\n')).toEqual([0, 1, 2.002]);
  });
});

describe('split and join commands', () => {
  it('splits the video stream only, copied, into MP4 parts at the given times', () => {
    expect(buildSplitArgs('/w/in', 0, [1.999, 3.999], '/w/parts/part-%04d.mp4')).toEqual(
      expect.arrayContaining(['-map', '0:0', '-c', 'copy', '-f', 'segment', '-segment_times', '1.999000,3.999000']),
    );
    expect(() => buildSplitArgs('in.mp4', 0, [2], '/w/p-%d.mp4')).toThrow('absolute');
  });

  it('joins without re-encoding; AAC audio is copied, other audio encoded to AAC; no audio: -an', () => {
    const copy = buildJoinArgs({
      list: '/w/l.txt',
      audio: { path: '/w/a.mov', codec: 'aac' },
      output: '/w/o.mp4',
      container: 'mp4',
    });
    expect(copy.join(' ')).toContain('-map 0:v:0 -map 1:a:0 -c:v copy -tag:v hvc1 -c:a copy');
    const encode = buildJoinArgs({
      list: '/w/l.txt',
      audio: { path: '/w/a.mov', codec: 'pcm_s16le' },
      output: '/w/o.mov',
      container: 'mov',
    });
    expect(encode.join(' ')).toContain('-c:a aac -b:a 192k');
    expect(buildJoinArgs({ list: '/w/l.txt', audio: null, output: '/w/o.mp4', container: 'mp4' })).toContain('-an');
    expect(concatList(["/w/it's.mp4", '/w/b.mp4'])).toBe("file '/w/it'\\''s.mp4'\nfile '/w/b.mp4'\n");
  });
});
