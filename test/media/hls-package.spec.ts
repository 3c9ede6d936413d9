// The HLS package pipeline with real ffmpeg (docs/ladder-plan.md steps 1–2): every playlist parsed by a real
// HLS parser (m3u8-parser) and held to RFC 8216 and Apple's authoring rules, each HEVC rung decoded and
// probed as Main10 PQ/HLG with ST 2086 and light levels in its init segment, the SDR rung made from the
// source (PSNR against it on the colour chart), and every rung's segments starting on the same frames.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Parser, type Manifest } from 'm3u8-parser';
import { DEFAULT_HDR_ENCODE } from '../../src/media/encoder-settings';
import type { Transfer } from '../../src/media/hdr-mapping';
import { readHdrMetadata } from '../../src/media/hdr-metadata';
import { packageLadder, type LadderSuccess } from '../../src/media/hls/package-ladder';
import { segmentAlignmentCheck, segmentDurationCheck } from '../../src/media/hls/package-checks';
import { itemRungs } from '../../src/media/ladder';
import type { LadderSpec } from '../../src/media/output-spec';
import { probeMedia } from '../../src/media/probe';
import { colourChartMp4, sdrMp4 } from '../fixtures/media';

const exec = promisify(execFile);
let out: string;

beforeAll(() => {
  out = mkdtempSync(join(tmpdir(), 'mediajobs-hls-'));
});
afterAll(() => rmSync(out, { recursive: true, force: true }));

function parse(path: string): Manifest {
  const parser = new Parser();
  parser.push(readFileSync(path, 'utf8'));
  parser.end();
  return parser.manifest;
}

async function makePackage(
  name: string,
  input: string,
  ladder: LadderSpec,
  transfer: Transfer = 'pq',
): Promise<LadderSuccess> {
  const outcome = await probeMedia(input, { api: 'sdr2hdr' });
  if (!outcome.ok) throw new Error(`fixture refused: ${outcome.code}`);
  const probe = outcome.probe;
  const rungs = itemRungs(ladder, transfer, probe.video!);
  const made = await packageLadder({
    input,
    probe,
    rungs,
    ladder,
    hdr: { ...DEFAULT_HDR_ENCODE, transfer },
    dir: join(out, name),
    scratchDir: join(out, `${name}-scratch`),
  });
  if (!made.ok) throw new Error(`package failed: ${made.code} ${made.stderrTail.join('\n')}`);
  return made;
}

async function probeStream(path: string): Promise<Record<string, any>> {
  const { stdout } = await exec('ffprobe', ['-v', 'error', '-show_streams', '-count_frames', '-of', 'json', path]);
  return JSON.parse(stdout).streams[0];
}

const LADDER: LadderSpec = { segmentSeconds: 2, hdrLines: [360, 180], hdrCodecs: ['hevc'], audioKbps: 128 };

describe('an HDR10 ladder of a 5 s 640×360 clip with audio', () => {
  let made: LadderSuccess;
  let master: Manifest;
  beforeAll(async () => {
    made = await makePackage('pq', await sdrMp4({ width: 640, height: 360, seconds: 5 }), LADDER);
    master = parse(join(made.dir, 'master.m3u8'));
  }, 240_000);

  it('has two HEVC PQ rungs and an SDR H.264 rung from the source, each in its own folder', () => {
    expect(made.renditions.map((rendition) => rendition.folder)).toEqual([
      'hevc-360-pq',
      'hevc-180-pq',
      'h264-360-sdr',
    ]);
  });

  it('writes a master playlist with VIDEO-RANGE, CODECS, RESOLUTION, FRAME-RATE, measured bandwidths and one audio group', () => {
    const text = readFileSync(join(made.dir, 'master.m3u8'), 'utf8');
    expect(text).toMatch(/^#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-INDEPENDENT-SEGMENTS\n/);
    expect(master.independentSegments).toBe(true);
    const audio = master.mediaGroups?.AUDIO?.aac;
    expect(Object.values(audio ?? {})).toEqual([
      expect.objectContaining({ uri: 'audio/playlist.m3u8', default: true }),
    ]);
    const variants = master.playlists ?? [];
    expect(variants.map((variant) => variant.uri)).toEqual(made.renditions.map((r) => `${r.folder}/playlist.m3u8`));
    for (const [i, variant] of variants.entries()) {
      const rendition = made.renditions[i];
      const a = variant.attributes;
      expect(a['VIDEO-RANGE']).toBe(rendition.rung.range);
      expect(a.RESOLUTION).toEqual({ width: rendition.rung.width, height: rendition.rung.height });
      expect(a['FRAME-RATE']).toBeCloseTo(30, 3);
      expect(a.AUDIO).toBe('aac');
      expect(a.CODECS).toBe(`${rendition.codecs},mp4a.40.2`);
      // Measured from the segments: the peak is at least the average; both include the audio.
      expect(Number(a.BANDWIDTH)).toBe(rendition.peakBitrate + made.audio!.peakBitrate);
      expect(Number(a['AVERAGE-BANDWIDTH'])).toBe(rendition.averageBitrate + made.audio!.averageBitrate);
      expect(Number(a.BANDWIDTH)).toBeGreaterThanOrEqual(Number(a['AVERAGE-BANDWIDTH']));
    }
    // Main10 (profile 2, compatible with 2 → 4 reversed), main tier; the constraint bytes as x265 set them.
    expect(variants[0].attributes.CODECS).toMatch(/^hvc1\.2\.4\.L\d+\.[0-9A-F]{1,2}(\.[0-9A-F]{1,2})*,mp4a\.40\.2$/);
    expect(variants[2].attributes.CODECS).toMatch(/^avc1\.64[0-9A-F]{4},mp4a\.40\.2$/);
  });

  it('writes media playlists that follow RFC 8216 and the authoring rules (target duration, map, 2–6 s segments)', () => {
    for (const folder of [...made.renditions.map((r) => r.folder), 'audio']) {
      const playlist = parse(join(made.dir, folder, 'playlist.m3u8'));
      expect(playlist.version).toBe(7);
      expect(playlist.playlistType).toBe('VOD');
      expect(playlist.endList).toBe(true);
      expect(playlist.segments.length).toBeGreaterThanOrEqual(3);
      for (const [i, segment] of playlist.segments.entries()) {
        expect(Math.round(segment.duration)).toBeLessThanOrEqual(playlist.targetDuration!);
        expect(segment.map?.uri).toBe('init.mp4');
        expect(segment.uri).toBe(`seg-${String(i).padStart(5, '0')}.m4s`);
        if (i < playlist.segments.length - 1) {
          expect(segment.duration).toBeGreaterThanOrEqual(2 - 0.03);
          expect(segment.duration).toBeLessThanOrEqual(6);
        }
      }
      if (folder !== 'audio') expect(playlist.independentSegments).toBe(true);
    }
  });

  it('makes codecs strings that match the streams ffprobe reports', async () => {
    for (const rendition of made.renditions) {
      const stream = await probeStream(rendition.joinedPath);
      if (rendition.rung.codec === 'hevc') {
        expect(stream.profile).toBe('Main 10');
        expect(rendition.codecs.startsWith(`hvc1.2.4.L${stream.level}.`)).toBe(true);
      } else {
        expect(stream.profile).toBe('High');
        expect(rendition.codecs).toBe(`avc1.6400${Number(stream.level).toString(16).toUpperCase().padStart(2, '0')}`);
      }
    }
  });

  it('decodes every HEVC rung as Main10 BT.2020 PQ with ST 2086 and the measured light levels in its init segment', async () => {
    for (const rendition of made.renditions.filter((r) => r.rung.codec === 'hevc')) {
      const stream = await probeStream(rendition.joinedPath);
      expect(stream).toMatchObject({
        codec_name: 'hevc',
        codec_tag_string: 'hvc1',
        pix_fmt: 'yuv420p10le',
        color_transfer: 'smpte2084',
        color_primaries: 'bt2020',
        width: rendition.rung.width,
        height: rendition.rung.height,
        nb_read_frames: '150',
      });
      // The decoder reads every segment without an error.
      const decoded = await exec('ffmpeg', [
        '-v',
        'error',
        '-i',
        join(made.dir, rendition.folder, 'playlist.m3u8'),
        '-f',
        'null',
        '-',
      ]);
      expect(decoded.stderr).toBe('');
      const boxes = await readHdrMetadata(join(made.dir, rendition.folder, 'init.mp4'));
      expect(boxes).toEqual({
        peakNits: DEFAULT_HDR_ENCODE.peakNits,
        levels: { maxCll: rendition.light!.maxCll, maxFall: rendition.light!.maxFall },
      });
      // testsrc2 through `reference`: its whites reach 203 cd/m²; the encode's overshoot on its saturated
      // edges at a ladder's bitrate goes higher, but never past the mastering peak (withinMasteringPeak).
      expect(rendition.light!.maxCll).toBeGreaterThanOrEqual(180);
      expect(rendition.light!.maxCll).toBeLessThanOrEqual(DEFAULT_HDR_ENCODE.peakNits);
    }
  });

  it('starts every rung’s segments on the same timestamps (± 1 frame)', async () => {
    const bounds = made.renditions.map(({ folder, starts, durations }) => ({ folder, starts, durations }));
    expect(segmentAlignmentCheck(bounds, 30)).toMatchObject({ passed: true, measured: 0 });
    expect(segmentDurationCheck(bounds).passed).toBe(true);
    // From the segments themselves: a keyframe where the playlist says each segment starts, and one at least
    // every second between (a player's rendition switch waits for the next keyframe: ladder-args.ts gopFrames).
    for (const rendition of made.renditions) {
      const { stdout } = await exec('ffprobe', [
        '-v',
        'error',
        '-select_streams',
        'v:0',
        '-show_entries',
        'packet=pts_time,flags',
        '-of',
        'csv=p=0',
        rendition.joinedPath,
      ]);
      const keyframes = stdout
        .split('\n')
        .filter((line) => line.endsWith('K_'))
        .map((line) => Number(line.split(',')[0]));
      expect(keyframes).toEqual(expect.arrayContaining(rendition.starts.map((start) => expect.closeTo(start, 3))));
      const gaps = keyframes.slice(1).map((time, i) => time - keyframes[i]);
      expect(Math.max(...gaps)).toBeLessThanOrEqual(1.001);
      expect(keyframes.length).toBeGreaterThan(rendition.segments);
    }
  });
});

describe('an HLG ladder', () => {
  it('tags its HEVC rung arib-std-b67 and the master says VIDEO-RANGE=HLG', async () => {
    const made = await makePackage('hlg', await sdrMp4({ width: 320, height: 180, seconds: 3 }), LADDER, 'hlg');
    expect(made.renditions.map((r) => r.folder)).toEqual(['hevc-180-hlg', 'h264-180-sdr']);
    const variants = parse(join(made.dir, 'master.m3u8')).playlists ?? [];
    expect(variants.map((variant) => variant.attributes['VIDEO-RANGE'])).toEqual(['HLG', 'SDR']);
    const stream = await probeStream(made.renditions[0].joinedPath);
    expect(stream).toMatchObject({ profile: 'Main 10', color_transfer: 'arib-std-b67', color_primaries: 'bt2020' });
    expect(made.renditions[0].light).toBeNull();
  }, 240_000);
});

describe('the SDR rung of the colour chart', () => {
  it('is the source itself: PSNR ≥ 45 dB against it, BT.709 H.264 High', async () => {
    const chart = await colourChartMp4();
    const made = await makePackage('chart', chart, { ...LADDER, hdrLines: [360] });
    const sdr = made.renditions.find((r) => r.rung.range === 'SDR')!;
    const stream = await probeStream(sdr.joinedPath);
    expect(stream).toMatchObject({
      profile: 'High',
      color_transfer: 'bt709',
      color_primaries: 'bt709',
      color_space: 'bt709',
    });
    const { stderr } = await exec('ffmpeg', [
      '-hide_banner',
      '-i',
      sdr.joinedPath,
      '-i',
      chart,
      '-lavfi',
      '[0:v][1:v]psnr',
      '-f',
      'null',
      '-',
    ]);
    const psnr = Number(/PSNR .* average:([\d.]+|inf)/.exec(stderr)?.[1].replace('inf', 'Infinity'));
    expect(psnr).toBeGreaterThanOrEqual(45);
  }, 240_000);
});
