// The output picture size: the short side to the requested lines, never up, even sides.
import { downscaleSize } from './output-geometry';

describe('downscaleSize', () => {
  it.each([
    [1920, 1080, 720, { width: 1280, height: 720 }],
    [4096, 2304, 1080, { width: 1920, height: 1080 }],
    [1440, 1080, 720, { width: 960, height: 720 }],
    [1000, 562, 360, { width: 640, height: 360 }],
    [1080, 1920, 720, { width: 720, height: 1280 }],
    [1280, 720, 720, null],
    [1920, 1080, undefined, null],
  ])('%i×%i to %p lines → %p', (width, height, target, expected) => {
    expect(downscaleSize(width, height, target)).toEqual(expected);
  });
});
