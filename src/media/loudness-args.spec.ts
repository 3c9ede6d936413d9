// Exact argv of the speech-loudness passes and the VAD's PCM, built from frozen ffprobe outputs of real
// files (test/fixtures/probe/*.json, made by regenerate.sh there).
import { HEAD_INFO, LOCAL_INPUT, frozenProbe } from '../../test/fixtures/probe/frozen';
import {
  buildGainLimiterArgs,
  buildLoudnessMeasureArgs,
  buildLoudnormArgs,
  buildPcmExtractArgs,
  canNormaliseLinearly,
  type LoudnessMeasurement,
} from './loudness-args';

describe('audio argv', () => {
  const m4a = () => frozenProbe('tone-44k.m4a', 'audio');
  const wav = () => frozenProbe('tone-s24-stereo.wav', 'audio');
  const measured: LoudnessMeasurement = {
    inputI: -20.41,
    inputTp: -2.08,
    inputLra: 1.1,
    inputThresh: -30.6,
    targetOffset: 0.35,
  };

  it('pass 1 measures with loudnorm (JSON at info level) and, beside it, the ebur128 meter', () => {
    expect(buildLoudnessMeasureArgs({ input: '/in/a.m4a', probe: m4a(), targetLufs: -16 })).toEqual([
      ...HEAD_INFO,
      ...LOCAL_INPUT('/in/a.m4a'),
      '-filter_complex',
      '[0:0]asplit=2[loudnorm][meter];[loudnorm]loudnorm=I=-16:TP=-1.5:LRA=11:print_format=json[measured];' +
        '[meter]ebur128=framelog=verbose,anullsink',
      '-map',
      '[measured]',
      '-f',
      'null',
      '-',
    ]);
  });

  it('pass 2 applies the measured values linearly and writes 16-bit WAV at the source rate', () => {
    expect(
      buildLoudnormArgs({
        input: '/in/a.wav',
        output: '/out/a.wav',
        probe: wav(),
        measured,
        targetLufs: -23,
        container: 'wav',
      }),
    ).toEqual([
      ...HEAD_INFO,
      ...LOCAL_INPUT('/in/a.wav'),
      '-map',
      '0:0',
      '-af',
      'loudnorm=I=-23:TP=-1.5:LRA=11:measured_I=-20.41:measured_TP=-2.08:measured_LRA=1.1:measured_thresh=-30.6:offset=0.35:linear=true:print_format=json',
      '-ar',
      '48000',
      '-c:a',
      'pcm_s16le',
      '-f',
      'wav',
      '/out/a.wav',
    ]);
  });

  it('pass 2 meters the s16 samples it writes to WAV in the same run (never M4A, whose encoder changes them)', () => {
    const metered = { input: '/in/a.wav', output: '/out/a.wav', probe: wav(), measured, targetLufs: -16 } as const;
    const args = buildLoudnormArgs({ ...metered, container: 'wav', meterWritten: true });
    expect(args.slice(args.indexOf('-filter_complex'))).toEqual([
      '-filter_complex',
      expect.stringMatching(
        /^\[0:0\]loudnorm=I=-16:.*:print_format=json,aresample=48000,aformat=sample_fmts=s16:sample_rates=48000,asplit=2\[written\]\[meter\];\[meter\]ebur128=framelog=verbose:peak=true,anullsink$/,
      ),
      '-map',
      '[written]',
      '-c:a',
      'pcm_s16le',
      '-f',
      'wav',
      '/out/a.wav',
    ]);
    const limited = buildGainLimiterArgs({ ...metered, gainDb: 4.41, container: 'wav', meterWritten: true });
    // One meter only: the limiter's correction loop reads the meter of the written samples.
    expect(limited.join(' ').match(/ebur128/g)).toHaveLength(1);
    expect(buildLoudnormArgs({ ...metered, container: 'm4a', meterWritten: true })).toEqual(
      buildLoudnormArgs({ ...metered, container: 'm4a' }),
    );
  });

  it('pass 2 writes AAC in M4A', () => {
    const args = buildLoudnormArgs({
      input: '/in/a.m4a',
      output: '/out/a.m4a',
      probe: m4a(),
      measured,
      targetLufs: -16,
      truePeakDbtp: -1,
      container: 'm4a',
    });
    expect(args.slice(-11)).toEqual([
      '-ar',
      '44100',
      '-c:a',
      'aac',
      '-b:a',
      '192k',
      '-movflags',
      '+faststart',
      '-f',
      'ipod',
      '/out/a.m4a',
    ]);
    expect(args[args.indexOf('-af') + 1]).toMatch(/^loudnorm=I=-16:TP=-1:LRA=11:/);
  });

  it('raises the LRA target to the measured range so a wide-range input can stay linear, and never passes LRA 0', () => {
    const wide = buildLoudnormArgs({
      input: '/in.wav',
      output: '/out.wav',
      probe: wav(),
      measured: { ...measured, inputLra: 14.32 },
      targetLufs: -16,
      container: 'wav',
    });
    expect(wide[wide.indexOf('-af') + 1]).toContain(
      ':LRA=14.4:measured_I=-20.41:measured_TP=-2.08:measured_LRA=14.32:',
    );
    const flat = buildLoudnormArgs({
      input: '/in.wav',
      output: '/out.wav',
      probe: wav(),
      measured: { ...measured, inputLra: 0 },
      targetLufs: -16,
      container: 'wav',
    });
    expect(flat[flat.indexOf('-af') + 1]).toContain(':LRA=11:measured_I=-20.41:measured_TP=-2.08:measured_LRA=0.1:');
  });

  it('stays with loudnorm linear only when the gain keeps the true peak under the target', () => {
    // -20.41 → -23 is -2.59 dB: peaks -4.67 dBTP. -20.41 → -16 is +4.41 dB: peaks +2.33 dBTP.
    expect(canNormaliseLinearly(measured, { targetLufs: -23 })).toBe(true);
    expect(canNormaliseLinearly(measured, { targetLufs: -16 })).toBe(false);
    expect(canNormaliseLinearly(measured, { targetLufs: -19.5, truePeakDbtp: -1 })).toBe(true);
  });

  it('builds gain + 4× oversampled limiter + ebur128 meter when a pure gain would clip', () => {
    expect(
      buildGainLimiterArgs({ input: '/in/a.wav', output: '/out/a.m4a', probe: wav(), gainDb: 4.41, container: 'm4a' }),
    ).toEqual([
      ...HEAD_INFO,
      ...LOCAL_INPUT('/in/a.wav'),
      '-map',
      '0:0',
      '-af',
      'volume=4.41dB,aresample=192000,alimiter=limit=0.8414:attack=1:release=20:level=false,aresample=48000,ebur128=framelog=verbose:peak=true',
      '-ar',
      '48000',
      '-c:a',
      'aac',
      '-b:a',
      '192k',
      '-movflags',
      '+faststart',
      '-f',
      'ipod',
      '/out/a.m4a',
    ]);
    expect(() =>
      buildGainLimiterArgs({ input: '/in.wav', output: '/o.wav', probe: wav(), gainDb: NaN, container: 'wav' }),
    ).toThrow(RangeError);
  });

  it('refuses targets loudnorm cannot take', () => {
    expect(() => buildLoudnessMeasureArgs({ input: '/in.wav', probe: wav(), targetLufs: -80 })).toThrow(RangeError);
    expect(() =>
      buildLoudnessMeasureArgs({ input: '/in.wav', probe: wav(), targetLufs: -16, truePeakDbtp: 1 }),
    ).toThrow(RangeError);
  });

  it('extracts 16 kHz mono s16le PCM to stdout for the VAD', () => {
    expect(buildPcmExtractArgs({ input: '/in/a.m4a', probe: m4a() })).toEqual([
      '-hide_banner',
      '-nostdin',
      '-loglevel',
      'error',
      ...LOCAL_INPUT('/in/a.m4a'),
      '-map',
      '0:0',
      '-ac',
      '1',
      '-ar',
      '16000',
      '-c:a',
      'pcm_s16le',
      '-f',
      's16le',
      'pipe:1',
    ]);
  });

  it('maps the audio stream by its index in a video file', () => {
    const args = buildPcmExtractArgs({ input: '/in.mp4', probe: frozenProbe('sdr-320x180-aac.mp4', 'audio') });
    expect(args.slice(args.indexOf('-map'), args.indexOf('-map') + 2)).toEqual(['-map', '0:1']);
  });
});
