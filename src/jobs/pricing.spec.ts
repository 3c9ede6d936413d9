import { outputPixels, resolutionPixels } from './output-options';
import { itemCredits } from './pricing';

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
