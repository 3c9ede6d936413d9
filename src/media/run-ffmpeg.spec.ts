import { parseEbur128Summary, parseLoudnormReport } from './loudness-reports';
import { FfmpegProgressParser, ProgressThrottle } from './run-ffmpeg';

describe('FfmpegProgressParser', () => {
  it('turns -progress blocks split across chunks into out_time seconds', () => {
    const parser = new FfmpegProgressParser();
    const first = parser.push(
      'frame=10\nfps=0.0\nout_time_us=N/A\nout_time_ms=N/A\nout_time=N/A\nprogress=continue\nframe=2',
    );
    const second = parser.push(
      '0\nout_time_us=700000\nout_time_ms=700000\nout_time=00:00:00.700000\nspeed=1.2x\nprogress=continue\n',
    );
    const third = parser.push('out_time_us=1000000\nprogress=end\n');
    expect(first).toEqual([expect.objectContaining({ outTimeSeconds: null, progress: 'continue' })]);
    expect(second).toEqual([expect.objectContaining({ outTimeSeconds: 0.7, progress: 'continue' })]);
    expect(second[0].fields).toMatchObject({ frame: '20', speed: '1.2x' });
    expect(third).toEqual([expect.objectContaining({ outTimeSeconds: 1, progress: 'end' })]);
  });

  it('falls back to the out_time clock and ignores negative start times', () => {
    const parser = new FfmpegProgressParser();
    expect(parser.push('out_time=01:02:03.500000\nprogress=continue\n')[0].outTimeSeconds).toBe(3723.5);
    expect(parser.push('out_time_us=-5000\nprogress=continue\n')[0].outTimeSeconds).toBeNull();
  });
});

describe('ProgressThrottle', () => {
  it('emits increasing values at most once per interval, holds 1 back until complete()', () => {
    let now = 0;
    const seen: number[] = [];
    const throttle = new ProgressThrottle(
      (f) => seen.push(f),
      1000,
      () => now,
    );
    throttle.report(0.1);
    now = 500;
    throttle.report(0.2); // too soon
    now = 1000;
    throttle.report(0.05); // not an increase
    now = 1100;
    throttle.report(0.3);
    now = 2200;
    throttle.report(1.2); // capped below 1 until done
    now = 2300;
    throttle.complete();
    throttle.complete();
    expect(seen).toEqual([0.1, 0.3, 0.99, 1]);
  });
});

describe('parseLoudnormReport', () => {
  it('reads the last loudnorm JSON block from stderr lines', () => {
    const lines = [
      "Input #0, wav, from '/tmp/in.wav':",
      '[Parsed_loudnorm_0 @ 0x55d0c0a0] ',
      '{',
      '\t"input_i" : "-20.41",',
      '\t"input_tp" : "-2.08",',
      '\t"input_lra" : "1.10",',
      '\t"input_thresh" : "-30.60",',
      '\t"output_i" : "-16.02",',
      '\t"output_tp" : "-1.50",',
      '\t"output_lra" : "1.00",',
      '\t"output_thresh" : "-26.20",',
      '\t"normalization_type" : "dynamic",',
      '\t"target_offset" : "0.02"',
      '}',
    ];
    expect(parseLoudnormReport(lines)).toEqual({
      inputI: -20.41,
      inputTp: -2.08,
      inputLra: 1.1,
      inputThresh: -30.6,
      targetOffset: 0.02,
      outputI: -16.02,
      outputTp: -1.5,
      outputLra: 1,
      normalizationType: 'dynamic',
    });
  });

  it('returns null when there is no report, and NaN for -inf', () => {
    expect(parseLoudnormReport(['Conversion failed!'])).toBeNull();
    const silent = parseLoudnormReport(['{', '"input_i" : "-inf",', '"input_tp" : "-inf"', '}']);
    expect(silent?.inputI).toBeNaN();
  });
});

describe('parseEbur128Summary', () => {
  it('reads integrated loudness, LRA and true peak from the last summary', () => {
    const lines = [
      '[Parsed_ebur128_4 @ 0x55ab5826e6c0] Summary:',
      '  Integrated loudness:',
      '    I:         -16.1 LUFS',
      '    Threshold: -26.7 LUFS',
      '  Loudness range:',
      '    LRA:         1.2 LU',
      '    Threshold: -36.1 LUFS',
      '  True peak:',
      '    Peak:       -1.5 dBFS',
    ];
    expect(parseEbur128Summary(lines)).toEqual({ integratedLufs: -16.1, truePeakDbtp: -1.5, lra: 1.2 });
    expect(parseEbur128Summary(['size=1kB'])).toBeNull();
  });
});
