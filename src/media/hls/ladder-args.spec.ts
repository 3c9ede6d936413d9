// The ladder's GOP: at most a second (a player's rendition switch waits for the next keyframe) and a divisor
// of the segment (every rung's segments cut on the same frames).
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { buildExpandCube } from '../hdr-mapping';
import type { VideoStreamInfo } from '../media.types';
import type { RungSpec } from '../output-spec';
import { buildLadderArgs, gopFrames } from './ladder-args';
import { segmentFrames } from '../segment-plan';

const exec = promisify(execFile);

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

describe('buildLadderArgs with expand', () => {
  it('gives each HDR rung its own pads, so ffmpeg accepts a graph of several expanded rungs', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ladder-args-'));
    try {
      const lutPath = join(dir, 'expand.cube');
      const choice = { mapping: 'expand', transfer: 'pq', peakNits: 1000 } as const;
      await writeFile(lutPath, buildExpandCube({ choice, sourcePrimaries: null, sourceTransfer: null, size: 5 }));
      const video: VideoStreamInfo = {
        index: 0,
        codec: 'h264',
        width: 320,
        height: 180,
        fps: 25,
        colorPrimaries: null,
        colorTransfer: null,
        colorSpace: null,
        colorRange: null,
        pixFmt: 'yuv420p',
      };
      const rung = (width: number, height: number): RungSpec => ({
        codec: 'hevc',
        range: 'PQ',
        width,
        height,
        bitrateKbps: 500,
      });
      const args = buildLadderArgs({
        input: join(dir, 'in.mp4'),
        probe: { container: 'mp4', formatName: 'mp4', durationSeconds: 1, video, encrypted: false },
        rungs: [rung(320, 180), rung(160, 90)],
        ladder: { segmentSeconds: 1, hdrLines: [180, 90], hdrCodecs: ['hevc'], audioKbps: 128 },
        hdr: { ...choice, preset: 'ultrafast' },
        lutPath,
        dir,
      });
      const graph = args[args.indexOf('-filter_complex') + 1];
      // The graph itself, on a generated picture: only ffmpeg can say whether its pads join up.
      await exec('ffmpeg', [
        ...[
          '-hide_banner',
          '-nostdin',
          '-loglevel',
          'error',
          '-f',
          'lavfi',
          '-i',
          'testsrc2=size=320x180:rate=25:d=0.2',
        ],
        ...['-filter_complex', graph, '-map', '[v0]', '-f', 'null', '-', '-map', '[v1]', '-f', 'null', '-'],
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
