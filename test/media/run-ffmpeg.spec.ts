// The process runner with real processes: cancel within 2 s, time limit, outside SIGKILL, stderr tail.
import { runFfmpeg, runMediaProcess } from '../../src/media/run-ffmpeg';

// Runs at real-time speed (-re) for 60 s unless stopped: a stand-in for a long encode.
const LONG_FFMPEG = [
  '-hide_banner',
  '-nostdin',
  '-re',
  '-f',
  'lavfi',
  '-i',
  'testsrc2=size=160x90:rate=10:duration=60',
  '-progress',
  'pipe:1',
  '-nostats',
  '-f',
  'null',
  '-',
];

describe('runMediaProcess / runFfmpeg', () => {
  it('kills on abort within 2 s and says aborted', async () => {
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(), 300);
    const result = await runFfmpeg(LONG_FFMPEG, { signal: controller.signal, durationSeconds: 60 });
    expect(result.status).toBe('aborted');
    expect(result.exitSignal).toBe('SIGKILL');
    expect(Date.now() - started - 300).toBeLessThan(2000);
  });

  it('kills at the time limit and says timeout', async () => {
    const started = Date.now();
    const result = await runFfmpeg(LONG_FFMPEG, { timeLimitMs: 500 });
    expect(result.status).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(2500);
  });

  it('does not start when already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    expect((await runFfmpeg(LONG_FFMPEG, { signal: controller.signal })).status).toBe('aborted');
  });

  it('classifies a SIGKILL it did not send (the OOM killer) as killed', async () => {
    const result = await runMediaProcess('sh', ['-c', 'kill -KILL $$']);
    expect(result).toMatchObject({ status: 'killed', exitSignal: 'SIGKILL' });
  });

  it('keeps only the last lines of stderr and reports failure with the exit code', async () => {
    const result = await runMediaProcess('sh', ['-c', 'for i in $(seq 1 120); do echo "line $i" >&2; done; exit 3'], {
      stderrLines: 50,
    });
    expect(result).toMatchObject({ status: 'failed', exitCode: 3 });
    expect(result.stderrTail).toHaveLength(50);
    expect(result.stderrTail[0]).toBe('line 71');
    expect(result.stderrTail[49]).toBe('line 120');
  });

  it('rejects when the binary does not exist', async () => {
    await expect(runFfmpeg(['-version'], { ffmpegPath: '/nonexistent/ffmpeg' })).rejects.toThrow(/cannot run/);
  });

  it('reports progress at most about once a second', async () => {
    const args = [
      '-hide_banner',
      '-nostdin',
      '-re',
      '-f',
      'lavfi',
      '-i',
      'testsrc2=size=160x90:rate=10:duration=3',
      '-progress',
      'pipe:1',
      '-stats_period',
      '0.2',
      '-nostats',
      '-f',
      'null',
      '-',
    ];
    const times: number[] = [];
    const values: number[] = [];
    const result = await runFfmpeg(args, {
      durationSeconds: 3,
      onProgress: (f) => {
        times.push(Date.now());
        values.push(f);
      },
    });
    expect(result.status).toBe('succeeded');
    expect(result.outTimeSeconds).toBeGreaterThan(2.5);
    expect(values[values.length - 1]).toBe(1);
    // Every gap except the final "1" (never held back) is at least the interval.
    for (let i = 1; i < times.length - 1; i++) expect(times[i] - times[i - 1]).toBeGreaterThanOrEqual(990);
    expect(values.length).toBeLessThanOrEqual(5);
  });
});
