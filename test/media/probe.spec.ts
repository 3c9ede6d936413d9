// Real ffprobe on generated fixtures: every submit/worker media verdict from its real cause.
import { createReadStream, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { scanIsoBmff } from '../../src/media/iso-bmff';
import { probeMedia } from '../../src/media/probe';
import {
  clipOfDuration,
  encryptedMp4,
  largePixelClip,
  mkvClip,
  mpeg4Part2Mp4,
  opusAudioMp4,
  randomBytesFile,
  sdrMovPcm,
  sdrMp4,
  speechM4a,
  speechWav,
  threeGpClip,
  truncatedMp4,
  untaggedMp4,
} from '../fixtures/media';

describe('probeMedia (real ffprobe)', () => {
  it('accepts a tagged SDR MP4 for sdr2hdr', async () => {
    const outcome = await probeMedia(await sdrMp4(), { api: 'sdr2hdr' });
    expect(outcome).toMatchObject({
      ok: true,
      probe: {
        container: 'mp4',
        encrypted: false,
        video: {
          codec: 'h264',
          width: 320,
          height: 180,
          fps: 30,
          colorPrimaries: 'bt709',
          colorTransfer: 'bt709',
          colorSpace: 'bt709',
          colorRange: 'tv',
        },
        audio: { codec: 'aac', sampleRate: 48000 },
      },
    });
    if (outcome.ok) expect(outcome.probe.durationSeconds).toBeCloseTo(1, 1);
  });

  it('reports an untagged clip with null colour tags', async () => {
    const outcome = await probeMedia(await untaggedMp4(), { api: 'sdr2hdr' });
    expect(outcome).toMatchObject({
      ok: true,
      probe: { video: { colorPrimaries: null, colorTransfer: null, colorSpace: null } },
    });
  });

  it('accepts MOV with PCM audio, WAV and M4A', async () => {
    expect(await probeMedia(await sdrMovPcm(), { api: 'sdr2hdr' })).toMatchObject({
      ok: true,
      probe: { container: 'mov' },
    });
    expect(await probeMedia(await speechWav(), { api: 'audio' })).toMatchObject({
      ok: true,
      probe: { container: 'wav' },
    });
    expect(await probeMedia(await speechM4a(), { api: 'audio' })).toMatchObject({
      ok: true,
      probe: { container: 'm4a' },
    });
  });

  it('finds CENC encryption in the boxes and in the packets: drm_protected', async () => {
    const path = await encryptedMp4();
    expect((await scanIsoBmff(path))?.encryptionSignals.sort()).toEqual(['enca', 'encv']);
    expect((await scanIsoBmff(await sdrMp4()))?.encryptionSignals).toEqual([]);
    expect(await probeMedia(path, { api: 'sdr2hdr' })).toMatchObject({ ok: false, code: 'drm_protected' });
    expect(await probeMedia(path, { api: 'audio' })).toMatchObject({ ok: false, code: 'drm_protected' });
    expect(await probeMedia(path, { api: 'sdr2hdr', allowEncrypted: true })).toMatchObject({
      ok: true,
      probe: { encrypted: true },
    });
  });

  it('refuses Matroska and 3GP as unsupported_format (whatever their codecs)', async () => {
    expect(await probeMedia(await mkvClip(), { api: 'sdr2hdr' })).toMatchObject({
      ok: false,
      code: 'unsupported_format',
      message: expect.stringContaining('matroska'),
    });
    expect(await probeMedia(await threeGpClip(), { api: 'sdr2hdr' })).toMatchObject({
      ok: false,
      code: 'unsupported_format',
    });
  });

  it('refuses MPEG-4 Part 2 video and Opus audio as unsupported_codec', async () => {
    expect(await probeMedia(await mpeg4Part2Mp4(), { api: 'sdr2hdr' })).toMatchObject({
      ok: false,
      code: 'unsupported_codec',
    });
    expect(await probeMedia(await opusAudioMp4(), { api: 'audio' })).toMatchObject({
      ok: false,
      code: 'unsupported_codec',
    });
  });

  it('answers invalid_media for random bytes and for a truncated MP4', async () => {
    expect(await probeMedia(await randomBytesFile(), { api: 'sdr2hdr' })).toMatchObject({
      ok: false,
      code: 'invalid_media',
    });
    expect(await probeMedia(await truncatedMp4(), { api: 'sdr2hdr' })).toMatchObject({
      ok: false,
      code: 'invalid_media',
    });
  });

  it('answers unsupported_format for an audio-only file sent to sdr2hdr', async () => {
    expect(await probeMedia(await speechM4a(), { api: 'sdr2hdr' })).toMatchObject({
      ok: false,
      code: 'unsupported_format',
    });
  });

  it('answers duration_exceeded above the limit', async () => {
    const path = await clipOfDuration(3);
    expect(await probeMedia(path, { api: 'sdr2hdr', maxDurationSeconds: 2 })).toMatchObject({
      ok: false,
      code: 'duration_exceeded',
    });
    expect(await probeMedia(path, { api: 'sdr2hdr', maxDurationSeconds: 3 })).toMatchObject({ ok: true });
  });

  it('answers out_of_memory for a frame above the worker pixel budget (default 3840×2160)', async () => {
    const path = await largePixelClip();
    expect(await probeMedia(path, { api: 'sdr2hdr', maxPixels: 3840 * 2160 })).toMatchObject({
      ok: false,
      code: 'out_of_memory',
    });
    expect(await probeMedia(path, { api: 'sdr2hdr', maxPixels: 4096 * 2304 })).toMatchObject({ ok: true });
  });

  it('answers timeout (not a media verdict) when a local probe runs past its limit', async () => {
    expect(await probeMedia(await sdrMp4(), { api: 'sdr2hdr', timeoutMs: 1 })).toMatchObject({
      ok: false,
      code: 'timeout',
    });
  });

  describe('over http on 127.0.0.1', () => {
    let server: Server;
    let base: string;
    const files = new Map<string, string>();

    beforeAll(async () => {
      files.set('/sdr.mp4', await sdrMp4());
      files.set('/clip.mkv', await mkvClip());
      server = createServer((req, res) => {
        const path = files.get(req.url ?? '');
        if (!path) {
          res.writeHead(404).end();
          return;
        }
        // ffmpeg writes moov at the end: ffprobe needs Range requests to reach it.
        const size = statSync(path).size;
        const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
        const start = range ? Number(range[1]) : 0;
        const end = range && range[2] ? Number(range[2]) : size - 1;
        res.writeHead(range ? 206 : 200, {
          'content-length': end - start + 1,
          'accept-ranges': 'bytes',
          ...(range ? { 'content-range': `bytes ${start}-${end}/${size}` } : {}),
        });
        createReadStream(path, { start, end }).pipe(res);
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });

    afterAll(async () => {
      await new Promise((resolve) => server.close(resolve));
    });

    it('probes a URL the same way', async () => {
      expect(await probeMedia(`${base}/sdr.mp4`, { api: 'sdr2hdr' })).toMatchObject({
        ok: true,
        probe: { container: 'mp4' },
      });
      expect(await probeMedia(`${base}/clip.mkv`, { api: 'sdr2hdr' })).toMatchObject({
        ok: false,
        code: 'unsupported_format',
      });
    });

    it('answers invalid_url for a 404 and for a closed port', async () => {
      expect(await probeMedia(`${base}/missing.mp4`, { api: 'sdr2hdr' })).toMatchObject({
        ok: false,
        code: 'invalid_url',
      });
      expect(await probeMedia('http://127.0.0.1:9/none.mp4', { api: 'sdr2hdr' })).toMatchObject({
        ok: false,
        code: 'invalid_url',
      });
    });
  });
});
