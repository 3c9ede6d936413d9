// The ladder's GOP: at most a second (a player's rendition switch waits for the next keyframe) and a divisor
// of the segment (every rung's segments cut on the same frames).
import { gopFrames, segmentFrames } from './ladder-args';

describe('gopFrames', () => {
  it.each([
    [4, 30, 30],
    [4, 29.97, 30],
    [4, 23.976, 24],
    [4, 25, 25],
    [6, 60, 60],
    [4, 12.5, 10],
    [4, 1, 1],
    [2, null, 25],
  ])('%s s segments at %s fps: a keyframe every %s frames', (seconds, fps, frames) => {
    expect(gopFrames(seconds, fps)).toBe(frames);
    expect(segmentFrames(seconds, fps) % frames).toBe(0);
  });
});
