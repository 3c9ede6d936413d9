// The probe verdict on frozen ffprobe outputs of real files (test/fixtures/probe/*.json).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { MediaApi } from './media.types';
import { classifyProbe, containerOf, type ClassifyOptions, type FfprobeOutput } from './probe';

const PROBE_DIR = join(__dirname, '../../test/fixtures/probe');

function frozen(name: string): FfprobeOutput {
  return JSON.parse(readFileSync(join(PROBE_DIR, `${name}.json`), 'utf8')) as FfprobeOutput;
}

function verdict(name: string, api: MediaApi, extra: Partial<ClassifyOptions> = {}) {
  return classifyProbe(frozen(name), { api, ...extra });
}

describe('classifyProbe', () => {
  describe('the length: what the packets say when the header says less (issue 29 item 1)', () => {
    const ends = (video: number, audio: number) =>
      new Map([
        [0, { endSeconds: video, lastPacketSeconds: 1 / 30 }],
        [1, { endSeconds: audio, lastPacketSeconds: 0.021333 }],
      ]);
    const length = (packetEnds: ReturnType<typeof ends> | null, api: MediaApi = 'sdr2hdr') => {
      const outcome = verdict('sdr-320x180-aac.mp4', api, { packetEnds, maxDurationSeconds: 100 });
      return outcome.ok ? outcome.probe.durationSeconds : outcome.code;
    };

    it('an honest header (1 s) is kept when only the last packet runs past it (AAC priming, ms)', () => {
      expect(length(ends(1, 1.016))).toBe(1);
      expect(length(null)).toBe(1);
    });

    it('a header that stops before the packets: the packets are the length, for the streams the API encodes', () => {
      expect(length(ends(30, 30.016))).toBe(30.016);
      expect(length(ends(1, 30.016))).toBe(30.016);
      expect(length(ends(30, 1), 'audio')).toBe(1);
      expect(length(ends(1, 30.016), 'audio')).toBe(30.016);
    });

    it('the limit is judged on the packets', () => {
      expect(length(ends(300, 300))).toBe('duration_exceeded');
    });
  });

  it('accepts a tagged SDR MP4 for sdr2hdr and reports what the argv builders need', () => {
    expect(verdict('sdr-320x180-aac.mp4', 'sdr2hdr')).toEqual({
      ok: true,
      probe: {
        container: 'mp4',
        formatName: 'mov,mp4,m4a,3gp,3g2,mj2',
        durationSeconds: 1,
        encrypted: false,
        video: {
          index: 0,
          codec: 'h264',
          width: 320,
          height: 180,
          fps: 30,
          colorPrimaries: 'bt709',
          colorTransfer: 'bt709',
          colorSpace: 'bt709',
          colorRange: 'tv',
          pixFmt: 'yuv420p',
        },
        audio: { index: 1, codec: 'aac', sampleRate: 48000, channels: 1 },
      },
    });
  });

  it('tells MOV, M4A and WAV apart although the mov demuxer names them all alike', () => {
    expect(verdict('sdr-pcm.mov', 'sdr2hdr')).toMatchObject({
      ok: true,
      probe: { container: 'mov', audio: { codec: 'pcm_s16le' } },
    });
    expect(verdict('tone-44k.m4a', 'audio')).toMatchObject({
      ok: true,
      probe: { container: 'm4a', audio: { sampleRate: 44100 } },
    });
    expect(verdict('tone-s24-stereo.wav', 'audio')).toMatchObject({
      ok: true,
      probe: { container: 'wav', audio: { codec: 'pcm_s24le', channels: 2 } },
    });
  });

  it('refuses 3GP (same demuxer as MP4, 3gp brand) as unsupported_format', () => {
    expect(verdict('clip.3gp', 'sdr2hdr')).toMatchObject({ ok: false, code: 'unsupported_format' });
  });

  it('answers drm_protected for CENC packets, or lets them through flagged when asked', () => {
    expect(verdict('cenc.mp4', 'sdr2hdr')).toMatchObject({ ok: false, code: 'drm_protected' });
    expect(verdict('cenc.mp4', 'audio')).toMatchObject({ ok: false, code: 'drm_protected' });
    expect(verdict('cenc.mp4', 'sdr2hdr', { allowEncrypted: true })).toMatchObject({
      ok: true,
      probe: { encrypted: true },
    });
  });

  it('answers drm_protected from box-scan evidence alone', () => {
    expect(verdict('sdr-320x180-aac.mp4', 'sdr2hdr', { encryptionSignals: ['encv'] })).toMatchObject({
      ok: false,
      code: 'drm_protected',
    });
  });

  it('refuses codecs outside the accepted lists, only for the streams the API uses', () => {
    expect(verdict('mpeg4-part2.mp4', 'sdr2hdr')).toMatchObject({
      ok: false,
      code: 'unsupported_codec',
      message: expect.stringContaining('mpeg4'),
    });
    expect(verdict('opus-audio.mp4', 'sdr2hdr')).toMatchObject({
      ok: false,
      code: 'unsupported_codec',
      message: expect.stringContaining('opus'),
    });
    expect(verdict('opus-audio.mp4', 'audio')).toMatchObject({ ok: false, code: 'unsupported_codec' });
    // The audio API never decodes the video track, so its codec does not matter.
    expect(verdict('mpeg4-part2.mp4', 'audio')).toMatchObject({
      ok: true,
      probe: { container: 'mp4', audio: { codec: 'aac' } },
    });
    expect(verdict('mpeg4-part2.mp4', 'audio')).not.toHaveProperty('probe.video');
  });

  it('answers unsupported_format when the stream the API needs is missing', () => {
    expect(verdict('tone-44k.m4a', 'sdr2hdr')).toMatchObject({
      ok: false,
      code: 'unsupported_format',
      message: expect.stringContaining('video'),
    });
    expect(verdict('sdr-portrait-1080x1920.mp4', 'audio')).toMatchObject({
      ok: false,
      code: 'unsupported_format',
      message: expect.stringContaining('audio'),
    });
  });

  it('applies the duration limit and the worker pixel budget', () => {
    expect(verdict('sdr-320x180-aac.mp4', 'sdr2hdr', { maxDurationSeconds: 0.5 })).toMatchObject({
      ok: false,
      code: 'duration_exceeded',
    });
    expect(verdict('sdr-320x180-aac.mp4', 'sdr2hdr', { maxDurationSeconds: 1 })).toMatchObject({ ok: true });
    expect(verdict('sdr-1920x1080-aac.mp4', 'sdr2hdr', { maxPixels: 1280 * 720 })).toMatchObject({
      ok: false,
      code: 'out_of_memory',
    });
    expect(verdict('sdr-1920x1080-aac.mp4', 'sdr2hdr', { maxPixels: 1920 * 1080 })).toMatchObject({ ok: true });
    // Pixels are a video-pipeline budget: the audio API never decodes the picture.
    expect(verdict('sdr-1920x1080-aac.mp4', 'audio', { maxPixels: 1 })).toMatchObject({ ok: true });
  });

  it('answers invalid_media for a listing without streams or without a duration', () => {
    const raw = frozen('sdr-320x180-aac.mp4');
    expect(classifyProbe({ ...raw, streams: [] }, { api: 'sdr2hdr' })).toMatchObject({
      ok: false,
      code: 'invalid_media',
    });
    expect(classifyProbe({}, { api: 'audio' })).toMatchObject({ ok: false, code: 'invalid_media' });
    const noDuration: FfprobeOutput = {
      ...raw,
      format: { ...raw.format, duration: undefined },
      streams: raw.streams?.map((s) => ({ ...s, duration: undefined })),
    };
    expect(classifyProbe(noDuration, { api: 'sdr2hdr' })).toMatchObject({ ok: false, code: 'invalid_media' });
  });
});

describe('containerOf', () => {
  const mov = 'mov,mp4,m4a,3gp,3g2,mj2';
  it.each([
    ['wav', {}, 'wav'],
    ['matroska,webm', {}, null],
    ['avi', {}, null],
    [mov, { major_brand: 'isom', compatible_brands: 'isomiso2avc1mp41' }, 'mp4'],
    [mov, { major_brand: 'mp42' }, 'mp4'],
    [mov, { major_brand: 'qt  ' }, 'mov'],
    [mov, {}, 'mov'],
    [mov, { major_brand: 'M4A ' }, 'm4a'],
    [mov, { major_brand: '3gp6', compatible_brands: '3gp6isomiso2' }, null],
    [mov, { major_brand: 'heic', compatible_brands: 'mif1heic' }, null],
    [mov, { major_brand: 'abcd', compatible_brands: 'abcdisom' }, 'mp4'],
    [mov, { major_brand: 'abcd', compatible_brands: 'abcd' }, null],
  ])('%s %p → %p', (formatName, tags, expected) => {
    expect(containerOf(formatName, tags as Record<string, string>)).toBe(expected);
  });
});
