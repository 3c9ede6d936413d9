// A package made in units (package-parts.ts) against the same package made in one run, real ffmpeg: the
// units are cut on frames that are not the source's keyframes, each unit encodes every rung of its range,
// the join packages each rung by stream copy — and the result has the one-run package's shape: the same
// segment boundaries on every rung, every frame exactly once, HDR10 boxes in the init segment.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Parser } from 'm3u8-parser';
import { DEFAULT_HDR_ENCODE } from '../../src/media/encoder-settings';
import { readHdrMetadata } from '../../src/media/hdr-metadata';
import { encodePackagePart, joinPackageParts } from '../../src/media/hls/package-parts';
import { planPackageUnits } from '../../src/media/segment-plan';
import { packageLadder, type LadderSuccess } from '../../src/media/hls/package-ladder';
import { segmentAlignmentCheck, segmentDurationCheck } from '../../src/media/hls/package-checks';
import { itemRungs } from '../../src/media/ladder';
import type { LadderSpec } from '../../src/media/output-spec';
import type { ProbeResult } from '../../src/media/media.types';
import { probeMedia } from '../../src/media/probe';
import { sdrMp4 } from '../fixtures/media';
import { decodedFrameCount, roundTripOfFile } from '../support/media-checks';

const LADDER: LadderSpec = { segmentSeconds: 2, hdrLines: [180, 120], hdrCodecs: ['hevc'], audioKbps: 128 };
const SECONDS = 9;
let out: string;

beforeAll(() => {
  out = mkdtempSync(join(tmpdir(), 'mediajobs-hls-parts-'));
});
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe('planPackageUnits', () => {
  it('cuts whole HLS segments on frames, the last never shorter than half a unit', () => {
    expect(planPackageUnits(10, 25, 4, 4)).toEqual([
      { start: 0, duration: 4 },
      { start: 4, duration: 4 },
      { start: 8, duration: 2 },
    ]);
    // 5 s asked, segments of 2 s: units of 2 segments (4 s); 9 s → 4 + 5 (the last 1 s joins the one before).
    expect(planPackageUnits(9, 25, 2, 5)).toEqual([
      { start: 0, duration: 4 },
      { start: 4, duration: 5 },
    ]);
    expect(planPackageUnits(7, 25, 4, 4)).toEqual([{ start: 0, duration: 7 }]);
    expect(planPackageUnits(100, 25, 4, 0)).toEqual([{ start: 0, duration: 100 }]);
  });
});

describe('a package made in units of 2 s (the last 1 s) against the same package in one run', () => {
  let probe: ProbeResult;
  let input: string;
  let onePass: LadderSuccess;
  let joined: LadderSuccess;

  beforeAll(async () => {
    input = await sdrMp4({ width: 320, height: 180, seconds: SECONDS });
    const probed = await probeMedia(input, { api: 'sdr2hdr' });
    if (!probed.ok) throw new Error(probed.code);
    probe = probed.probe;
    const rungs = itemRungs(LADDER, 'pq', probe.video!);
    const common = { input, probe, rungs, ladder: LADDER, hdr: { ...DEFAULT_HDR_ENCODE, transfer: 'pq' as const } };
    const whole = await packageLadder({ ...common, dir: join(out, 'one'), scratchDir: join(out, 'one-scratch') });
    if (!whole.ok) throw new Error(whole.stderrTail.join('\n'));
    onePass = whole;
    const units = planPackageUnits(probe.durationSeconds, probe.video!.fps, LADDER.segmentSeconds, 2);
    expect(units.length).toBe(5);
    const unitDirs: string[] = [];
    for (const [n, unit] of units.entries()) {
      const partsDir = join(out, `unit-${n}`);
      const part = await encodePackagePart({
        ...common,
        unit,
        last: n === units.length - 1,
        partsDir,
        scratchDir: join(out, `unit-${n}-scratch`),
      });
      if (!part.ok) throw new Error(part.stderrTail.join('\n'));
      unitDirs.push(partsDir);
    }
    const made = await joinPackageParts({
      ...common,
      unitDirs,
      dir: join(out, 'joined'),
      scratchDir: join(out, 'joined-scratch'),
    });
    if (!made.ok) throw new Error(made.stderrTail.join('\n'));
    joined = made;
  }, 300_000);

  it('has the same renditions, segments and boundaries as one run', () => {
    expect(joined.renditions.map((r) => r.folder)).toEqual(onePass.renditions.map((r) => r.folder));
    for (const [i, rendition] of joined.renditions.entries()) {
      expect(rendition.starts).toEqual(onePass.renditions[i].starts);
      expect(rendition.codecs).toBe(onePass.renditions[i].codecs);
    }
    const bounds = joined.renditions.map(({ folder, starts, durations }) => ({ folder, starts, durations }));
    expect(segmentAlignmentCheck(bounds, probe.video!.fps ?? 25).passed).toBe(true);
    expect(segmentDurationCheck(bounds).passed).toBe(true);
    const master = new Parser();
    master.push(readFileSync(join(joined.dir, 'master.m3u8'), 'utf8'));
    master.end();
    expect(master.manifest.playlists).toHaveLength(joined.renditions.length);
  });

  it('has every frame of the source exactly once in every rung, and HDR10 boxes in each HDR init segment', async () => {
    const source = await decodedFrameCount(input);
    for (const rendition of joined.renditions) {
      expect(await decodedFrameCount(rendition.joinedPath)).toBe(source);
      if (rendition.rung.range === 'PQ') {
        const metadata = await readHdrMetadata(rendition.joinedPath);
        expect(metadata?.levels.maxCll).toBeGreaterThan(0);
        expect(rendition.light?.maxCll).toBe(metadata?.levels.maxCll);
      }
    }
  });

  it("measures each PQ rung's round trip in its light pass (the source decoded there) as the check does from the file", async () => {
    for (const [i, rendition] of joined.renditions.entries()) {
      if (rendition.rung.range !== 'PQ') {
        expect(rendition.roundTrip).toBeNull();
        continue;
      }
      const { mapping, peakNits } = DEFAULT_HDR_ENCODE;
      const fromFile = await roundTripOfFile(rendition.joinedPath, input, { mapping, transfer: 'pq', peakNits });
      expect(rendition.roundTrip).toEqual(fromFile);
      // The one-pass package compares the same frames, kept by its encode.
      expect(onePass.renditions[i].roundTrip?.every).toBe(rendition.roundTrip?.every);
      expect(fromFile.ssim).toBeGreaterThan(0.7);
    }
  });
});
