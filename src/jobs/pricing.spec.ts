import { outputLines } from './output-options';
import { itemCredits } from './pricing';

describe('pricing (docs/api-decisions.md §4)', () => {
  it('sdr2hdr charges per started second by output tier', () => {
    expect(itemCredits('sdr2hdr', 12, 720)).toBe(12);
    expect(itemCredits('sdr2hdr', 12, 1080)).toBe(24);
    expect(itemCredits('sdr2hdr', 12.01, 1080)).toBe(26);
    expect(itemCredits('sdr2hdr', 10, 2160)).toBe(80);
    expect(itemCredits('sdr2hdr', 3, 360)).toBe(3);
  });

  it('audio charges one credit per started 10 seconds', () => {
    expect(itemCredits('audio', 10)).toBe(1);
    expect(itemCredits('audio', 10.5)).toBe(2);
    expect(itemCredits('audio', 0.2)).toBe(1);
  });

  it('prices the lines of the short side, never upscaled: portrait 1080×1920 is 1080p', () => {
    const lines = (width: number, height: number, resolution: Parameters<typeof outputLines>[1]) =>
      outputLines({ width, height }, resolution);
    expect(lines(1920, 1080, '720p')).toBe(720);
    expect(lines(854, 480, '1080p')).toBe(480);
    expect(lines(3840, 2160, 'source')).toBe(2160);
    expect(lines(1080, 1920, 'source')).toBe(1080);
    expect(lines(1080, 1920, '720p')).toBe(720);
    expect(lines(360, 203, 'source')).toBe(202);
    expect(lines(1000, 563, '720p')).toBe(562);
    expect(outputLines({ width: null, height: null }, 'source')).toBe(0);
  });
});
