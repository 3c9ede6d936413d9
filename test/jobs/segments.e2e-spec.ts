// Segment-parallel sdr2hdr (SEGMENT_SECONDS, docs/api-decisions.md §11): the real API, two worker processes, real
// ffmpeg. A long item is cut at keyframes, its segments are encoded by both workers and joined without
// re-encoding; the result is indistinguishable from a single pass (frame count, HDR10, one HEVC Main10
// stream, audio once, luma SSIM), billed once; the temporary segments are gone afterwards. A cancel and a
// SIGKILLed worker: test/jobs/segments-faults.e2e-spec.ts (two files, so that two Jest workers share them).
// The clips are 160×90: the join and its checks behave the same as at 1080p; what matters is their length
// (2 s segments: a 10 s clip makes five, a 6 s clip three).
import { join } from 'node:path';
import { DEFAULT_HDR_ENCODE } from '../../src/media/encoder-settings';
import { readHdrMetadata } from '../../src/media/hdr-metadata';
import { readMediainfoHdr } from '../../src/media/mediainfo';
import { convertSdrToHdr } from '../../src/media/pipelines';
import { probeMedia } from '../../src/media/probe';
import { QUALITY_PRESETS } from '../../src/media/quality-presets';
import { keyframedSdrMp4 } from '../fixtures/media';
import { decodedLightLevels } from '../support/hdr-light';
import { upload, waitForJob } from '../support/jobs';
import { decodedFrameCount } from '../support/media-checks';
import { auditMoney } from '../support/processes';
import { GRANT, lumaSsim, segmentSuite, streams } from '../support/segment-suite';

describe('segment-parallel sdr2hdr', () => {
  const suite = segmentSuite('segments');
  const { twoWorkers, submit, segmentRows, outboxEvents, expectSegmentsGone, download } = suite;

  it('a 10 s clip is encoded in segments on both workers and joined: same frames, HDR10, audio once, SSIM ≥ 0.995 against one pass, billed once', async () => {
    const region = 'seg-two';
    const { ids } = await twoWorkers(region);
    const source = await keyframedSdrMp4({ width: 160, height: 90, seconds: 10 });
    const jobId = await submit(region, await upload(suite.api(), suite.account().apiKey, source));

    const job = await waitForJob(suite.api(), suite.account().apiKey, `/v1/sdr2hdr/jobs/${jobId}`, undefined, 240_000);
    expect(job).toMatchObject({ status: 'succeeded', progress: 1, billing: { state: 'settled' } });
    const segments = await segmentRows(jobId);
    expect(segments.length).toBeGreaterThanOrEqual(4);
    expect(segments.every((segment) => segment.status === 'succeeded')).toBe(true);
    // Any worker of the region encodes segments: both did.
    expect(new Set(segments.map((segment) => segment.worker))).toEqual(new Set(ids));

    const output = await download(job.items[0].output.url, `${jobId}.mp4`);
    expect(await decodedFrameCount(output)).toBe(await decodedFrameCount(source));
    const [video, audio, ...more] = await streams(output);
    expect(more).toEqual([]);
    expect(video).toMatchObject({
      codec_type: 'video',
      codec_name: 'hevc',
      profile: 'Main 10',
      pix_fmt: 'yuv420p10le',
      color_transfer: 'smpte2084',
      color_primaries: 'bt2020',
    });
    const [, sourceAudio] = await streams(source);
    expect(audio).toMatchObject({ codec_type: 'audio', codec_name: 'aac' });
    expect(Math.abs(Number(audio.duration) - Number(sourceAudio.duration))).toBeLessThan(0.05);
    expect(Math.abs(Number(audio.start_time) - Number(video.start_time))).toBeLessThan(0.05);
    expect(await readMediainfoHdr(output)).toMatchObject({ isHdr10: true });

    // The same item in one pass, with the same settings: the joins cost nothing visible.
    const probed = await probeMedia(source, { api: 'sdr2hdr' });
    if (!probed.ok) throw new Error(probed.message);
    const single = join(suite.dir(), `${jobId}-single.mp4`);
    const onePass = await convertSdrToHdr({
      ...DEFAULT_HDR_ENCODE,
      input: source,
      output: single,
      container: 'mp4',
      probe: probed.probe,
      ...QUALITY_PRESETS.balanced,
    });
    expect(onePass.ok).toBe(true);
    expect(await lumaSsim(output, single)).toBeGreaterThanOrEqual(0.995);

    expect((await auditMoney(suite.api(), suite.account().apiKey, [job], GRANT)).problems).toEqual([]);
    expect(await outboxEvents(jobId)).toEqual(['job.succeeded']);
    await expectSegmentsGone(jobId);
  }, 400_000);

  it.each([
    ['expand to PQ 1000', { mapping: 'expand', peak_nits: 1000 }, 'smpte2084'],
    ['expand to HLG', { mapping: 'expand', transfer: 'hlg' }, 'arib-std-b67'],
  ] as const)(
    'segmented %s is seamless: same frames, one HEVC stream with its tags, SSIM ≥ 0.995 against one pass, the whole item’s light',
    async (label, output, transferTag) => {
      const region = `seg-${label.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
      await twoWorkers(region);
      const source = await keyframedSdrMp4({ width: 160, height: 90, seconds: 6, audio: false });
      const jobId = await submit(region, await upload(suite.api(), suite.account().apiKey, source), output);
      const job = await waitForJob(
        suite.api(),
        suite.account().apiKey,
        `/v1/sdr2hdr/jobs/${jobId}`,
        undefined,
        240_000,
      );
      expect(job).toMatchObject({ status: 'succeeded' });
      expect((await segmentRows(jobId)).length).toBeGreaterThanOrEqual(2);

      const file = await download(job.items[0].output.url, `${jobId}.mp4`);
      expect(await decodedFrameCount(file)).toBe(await decodedFrameCount(source));
      const [video, ...more] = await streams(file);
      expect(more).toEqual([]);
      expect(video).toMatchObject({ codec_name: 'hevc', profile: 'Main 10', color_transfer: transferTag });

      const probed = await probeMedia(source, { api: 'sdr2hdr' });
      if (!probed.ok) throw new Error(probed.message);
      const single = join(suite.dir(), `${jobId}-single.mp4`);
      const transfer = 'transfer' in output ? output.transfer : 'pq';
      const onePass = await convertSdrToHdr({
        ...DEFAULT_HDR_ENCODE,
        input: source,
        output: single,
        container: 'mp4',
        probe: probed.probe,
        mapping: output.mapping,
        transfer,
        ...QUALITY_PRESETS.balanced,
      });
      expect(onePass.ok).toBe(true);
      expect(await lumaSsim(file, single)).toBeGreaterThanOrEqual(0.995);

      const light = job.items[0].output.video.light;
      if (transfer === 'hlg') {
        expect(light).toEqual({ mapping: 'expand', mastering_peak_nits: null, max_cll: null, max_fall: null });
        return;
      }
      // The whole item's levels (the brightest segment's), in the view, the boxes and the SEI alike; MaxCLL
      // never above the mastering peak (issue 40: chroma reconstruction on testsrc2's one-pixel edges decodes
      // brighter than the signal the encode was given).
      const decoded = await decodedLightLevels(file, 160, 90);
      expect(Math.abs(light.max_cll / Math.min(decoded.maxCll, 1000) - 1)).toBeLessThan(0.05);
      expect(Math.abs(light.max_fall / decoded.maxFall - 1)).toBeLessThan(0.05);
      expect(await readHdrMetadata(file)).toEqual({
        levels: { maxCll: light.max_cll, maxFall: light.max_fall },
        peakNits: 1000,
      });
      expect(await readMediainfoHdr(file)).toMatchObject({ maxCll: `${light.max_cll} cd/m2` });
    },
    400_000,
  );
});
