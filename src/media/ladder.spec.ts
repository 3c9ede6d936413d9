import {
  DEFAULT_HDR_LINES,
  defaultHdrLines,
  itemRungs,
  LADDER_AUDIO_KBPS,
  LADDER_SEGMENT_SECONDS,
  ladderSpec,
} from './ladder';
import type { LadderSpec } from './output-spec';

const ladder = (hdrLines: number[], hdrCodecs: LadderSpec['hdrCodecs'] = ['hevc']): LadderSpec => ({
  segmentSeconds: LADDER_SEGMENT_SECONDS,
  hdrLines,
  hdrCodecs,
  audioKbps: LADDER_AUDIO_KBPS,
});

describe('itemRungs', () => {
  it('a 1080p source gets four HDR10 rungs and two SDR rungs, none above the source', () => {
    const rungs = itemRungs(ladder(defaultHdrLines(1080)), 'pq', { width: 1920, height: 1080 });
    expect(rungs.map((r) => `${r.codec} ${r.range} ${r.width}x${r.height}`)).toEqual([
      'hevc PQ 1920x1080',
      'hevc PQ 1280x720',
      'hevc PQ 960x540',
      'hevc PQ 640x360',
      'h264 SDR 1920x1080',
      'h264 SDR 960x540',
    ]);
  });

  it('drops asked lines above a smaller source, and a tiny source gets one rung of each range at its own size', () => {
    expect(itemRungs(ladder([1080, 720]), 'hlg', { width: 1280, height: 720 }).map((r) => r.height)).toEqual([
      720, 720, 360,
    ]);
    const tiny = itemRungs(ladder(defaultHdrLines(91)), 'pq', { width: 161, height: 91 });
    expect(tiny.map((r) => `${r.range} ${r.width}x${r.height}`)).toEqual(['PQ 160x90', 'SDR 160x90']);
  });

  it('portrait sources keep their shape, and AV1 rungs repeat the HDR lines at a lower bitrate', () => {
    const rungs = itemRungs(ladder([720], ['hevc', 'av1']), 'pq', { width: 1080, height: 1920 });
    expect(rungs.slice(0, 2).map((r) => `${r.codec} ${r.width}x${r.height}`)).toEqual([
      'hevc 720x1280',
      'av1 720x1280',
    ]);
    expect(rungs[1].bitrateKbps).toBeLessThan(rungs[0].bitrateKbps);
  });
});

describe('ladderSpec (the submit stores one ladder for every item of a job)', () => {
  const hdrLines = (spec: LadderSpec, width: number, height: number) =>
    itemRungs(spec, 'pq', { width, height })
      .filter((r) => r.range !== 'SDR')
      .map((r) => Math.min(r.width, r.height));

  it('the default ladder, stored once, gives every source defaultHdrLines of its own', () => {
    const spec = ladderSpec(null, ['hevc'], 2160);
    expect(spec).toEqual({
      segmentSeconds: LADDER_SEGMENT_SECONDS,
      hdrLines: DEFAULT_HDR_LINES,
      hdrCodecs: ['hevc'],
      audioKbps: LADDER_AUDIO_KBPS,
      maxHdrRungs: 4,
    });
    for (const lines of [91, 144, 360, 500, 720, 1080, 1200, 1440, 2160, 4320]) {
      expect({ lines, rungs: hdrLines(spec, Math.round((lines * 16) / 9), lines) }).toEqual({
        lines,
        rungs: defaultHdrLines(lines),
      });
    }
    expect(hdrLines(spec, 3840, 2160)).toEqual([2160, 1440, 1080, 720]);
  });

  it("the default stops at the plan's largest output; a client's ladder is sorted and never cut to four", () => {
    expect(hdrLines(ladderSpec(null, ['hevc'], 1080), 3840, 2160)).toEqual([1080, 720, 540, 360]);
    const asked = ladderSpec([360, 2160, 720, 1440, 540, 1080], ['hevc', 'av1'], 1080);
    expect(asked.hdrLines).toEqual([2160, 1440, 1080, 720, 540, 360]);
    expect(asked.maxHdrRungs).toBeUndefined();
    expect(hdrLines(asked, 3840, 2160)).toEqual([2160, 1440, 1080, 720, 540, 360, 2160, 1440, 1080, 720, 540, 360]);
  });
});
