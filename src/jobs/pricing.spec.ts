import { outputPixels, resolutionPixels } from './output-options';
import { ladderSpec } from '../media/ladder';
import type { HdrOutputSpec } from '../media/output-spec';
import { outputSpec, resolveOutput } from './output-options';
import { itemCredits, packageRungs, specCredits, sumCredits } from './pricing';

describe('pricing (docs/api-decisions.md §4)', () => {
  it('sdr2hdr charges per started second by the output picture’s pixels', () => {
    expect(itemCredits('sdr2hdr', 12, 1280 * 720)).toBe(12);
    expect(itemCredits('sdr2hdr', 12, 1920 * 1080)).toBe(24);
    expect(itemCredits('sdr2hdr', 12.01, 1920 * 1080)).toBe(26);
    expect(itemCredits('sdr2hdr', 10, 3840 * 2160)).toBe(80);
    expect(itemCredits('sdr2hdr', 3, 640 * 360)).toBe(3);
  });

  it('equal pixels cost the same in any shape: 11520×720 is 3840×2160, 1440×1440 is 1920×1080', () => {
    expect(itemCredits('sdr2hdr', 10, 11520 * 720)).toBe(itemCredits('sdr2hdr', 10, 3840 * 2160));
    expect(itemCredits('sdr2hdr', 10, 1440 * 1440)).toBe(itemCredits('sdr2hdr', 10, 1920 * 1080));
    // One pixel past a tier is the next tier.
    expect(itemCredits('sdr2hdr', 10, 1280 * 720 + 1)).toBe(20);
  });

  it('every 16:9 picture keeps the price of its short side (the tiers before pixels)', () => {
    const byLines = (lines: number) => (lines <= 720 ? 1 : lines <= 1080 ? 2 : 8);
    for (const lines of [180, 360, 540, 720, 900, 1080, 1440, 2160]) {
      const width = (lines * 16) / 9;
      expect(itemCredits('sdr2hdr', 1, outputPixels({ width, height: lines }, 'source'))).toBe(byLines(lines));
    }
  });

  it('a resolution stands for the pixels of its 16:9 picture', () => {
    expect(resolutionPixels(720)).toBe(1280 * 720);
    expect(resolutionPixels(1080)).toBe(1920 * 1080);
    expect(resolutionPixels(2160)).toBe(3840 * 2160);
  });

  it('audio charges one credit per started 10 seconds', () => {
    expect(itemCredits('audio', 10)).toBe(1);
    expect(itemCredits('audio', 10.5)).toBe(2);
    expect(itemCredits('audio', 0.2)).toBe(1);
  });

  it('prices the output picture, never upscaled: the requested lines on the short side', () => {
    const pixels = (width: number, height: number, resolution: Parameters<typeof outputPixels>[1]) =>
      outputPixels({ width, height }, resolution);
    expect(pixels(1920, 1080, '720p')).toBe(1280 * 720);
    expect(pixels(854, 480, '1080p')).toBe(854 * 480);
    expect(pixels(3840, 2160, 'source')).toBe(3840 * 2160);
    expect(pixels(1080, 1920, 'source')).toBe(1080 * 1920);
    expect(pixels(1080, 1920, '720p')).toBe(720 * 1280);
    expect(pixels(360, 203, 'source')).toBe(360 * 202);
    expect(pixels(11520, 720, '720p')).toBe(11520 * 720);
    expect(outputPixels({ width: null, height: null }, 'source')).toBe(0);
  });
});

describe('a package is priced per rung', () => {
  const plan = { maxOutputHeight: 2160 };
  const hls = (output: object) =>
    outputSpec(resolveOutput({ api: 'sdr2hdr', output: { package: 'hls', ...output } }), plan);
  const source = { width: 1920, height: 1080 };

  it("a 1080p source's default ladder costs the sum of its rungs: 4 HDR10 + 2 SDR = 2+1+1+1 + 2+1 a second", () => {
    const spec = hls({});
    expect(packageRungs(spec as HdrOutputSpec, source).map((r) => `${r.codec} ${r.height}`)).toEqual([
      'hevc 1080',
      'hevc 720',
      'hevc 540',
      'hevc 360',
      'h264 1080',
      'h264 540',
    ]);
    expect(specCredits(spec, 10, source)).toBe(80);
    expect(specCredits(spec, 9.2, source)).toBe(80); // each rung per started second, as a file
  });

  it('AV1 rungs are priced as their pictures too; a file keeps its one-picture price', () => {
    expect(specCredits(hls({ ladder: [{ height: 720 }], codecs: ['hevc', 'av1'] }), 10, source)).toBe(
      10 * (1 + 1) + 10 * (2 + 1),
    );
    const file = outputSpec(resolveOutput({ api: 'sdr2hdr', output: {} }));
    expect(file).toMatchObject({ package: 'file', ladder: null });
    expect(specCredits(file, 10, source)).toBe(itemCredits('sdr2hdr', 10, 1920 * 1080));
    expect(specCredits(outputSpec(resolveOutput({ api: 'audio' })), 25, { width: null, height: null })).toBe(3);
  });

  it('sumCredits is itemCredits per picture', () => {
    expect(
      sumCredits(3.5, [
        { width: 3840, height: 2160 },
        { width: 640, height: 360 },
      ]),
    ).toBe(4 * 8 + 4 * 1);
    expect(ladderSpec(null, ['hevc'], 1080).hdrLines[0]).toBe(1080);
  });
});
