import { outputHeight } from './output-options';
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

  it('never upscales: the output height is at most the source height', () => {
    expect(outputHeight(1080, '720p')).toBe(720);
    expect(outputHeight(480, '1080p')).toBe(480);
    expect(outputHeight(2160, 'source')).toBe(2160);
  });
});
