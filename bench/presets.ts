// Benchmark 6: the three `output.quality` presets on the same 1080p clip, with the worker's exact
// argv (buildSdrToHdrArgs), each against `balanced` (today's default) in the same run. Per preset:
// wall time and CPU seconds of the encode (CPU is steadier than wall time on a shared machine), speed
// × realtime, output bytes, and round-trip luma SSIM (PQ → BT.709 with the same npl=203, against the
// source) — the table README "Speed or quality" publishes.
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { buildSdrToHdrArgs } from '../src/media/hdr-args';
import { probeMedia } from '../src/media/probe';
import { QUALITY_CHOICES, QUALITY_PRESETS, type Quality } from '../src/media/quality-presets';
import { sdrClip } from './lib/media';
import { compare, type BenchContext, type BenchResult } from './lib/report';
import { median, round } from './lib/stats';

const run = promisify(execFile);
const TO_SDR =
  'zscale=tin=smpte2084:pin=bt2020:min=bt2020nc:rin=tv:t=bt709:p=bt709:m=bt709:r=tv:npl=203,format=yuv420p';

export interface Encode {
  wallSeconds: number;
  cpuSeconds: number;
}

/** Runs ffmpeg under bash so that `times` reports the child's user + system CPU seconds. */
export function encode(args: string[]): Promise<Encode> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn('bash', ['-c', 'ffmpeg "$@" && times', 'ffmpeg', ...args], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`ffmpeg exited with ${code}`));
      // `times` prints the shell's own times, then its children's: "0m12.345s 0m0.678s".
      const children = out.trim().split('\n').at(-1) ?? '';
      const seconds = [...children.matchAll(/(\d+)m([\d.]+)s/g)].map(([, m, s]) => Number(m) * 60 + Number(s));
      resolve({
        wallSeconds: Number(process.hrtime.bigint() - started) / 1e9,
        cpuSeconds: seconds.reduce((sum, value) => sum + value, 0),
      });
    });
  });
}

async function lumaSsim(hdr: string, source: string): Promise<number> {
  const { stderr } = await run(
    'ffmpeg',
    [
      '-hide_banner',
      '-nostdin',
      '-i',
      hdr,
      '-i',
      source,
      '-filter_complex',
      `[0:v]${TO_SDR}[a];[1:v]format=yuv420p[b];[a][b]ssim`,
      '-f',
      'null',
      '-',
    ],
    { maxBuffer: 16 * 1024 * 1024 },
  );
  const match = /SSIM Y:([\d.]+)/.exec(stderr);
  if (!match) throw new Error('presets: no SSIM in ffmpeg output');
  return Number(match[1]);
}

export async function benchPresets(context: BenchContext): Promise<BenchResult[]> {
  const [width, height, seconds] = context.quick ? [640, 360, 2] : [1920, 1080, 10];
  const rounds = context.quick ? 1 : 3;
  const clip = await sdrClip(width, height, seconds);
  const probed = await probeMedia(clip, { api: 'sdr2hdr', ffprobePath: 'ffprobe' });
  if (!probed.ok) throw new Error(`presets: the clip does not probe: ${probed.message}`);
  const scratch = await mkdtemp(join(tmpdir(), 'mediajobs-bench-presets-'));
  try {
    const samples = Object.fromEntries(QUALITY_CHOICES.map((quality) => [quality, [] as Encode[]])) as Record<
      Quality,
      Encode[]
    >;
    const measured: Record<string, { bytes: number; ssim: number }> = {};
    // Round-robin, rotating who goes first, so a machine that slowly gets busier weighs on all alike.
    for (let index = 0; index < rounds; index++) {
      for (let offset = 0; offset < QUALITY_CHOICES.length; offset++) {
        const quality = QUALITY_CHOICES[(index + offset) % QUALITY_CHOICES.length];
        const output = join(scratch, `${quality}.mp4`);
        const args = buildSdrToHdrArgs({
          input: clip,
          output,
          probe: probed.probe,
          container: 'mp4',
          targetHeight: height,
          ...QUALITY_PRESETS[quality],
        });
        samples[quality].push(await encode(args));
        context.log(`presets: ${quality} round ${index + 1}: ${round(samples[quality].at(-1)!.wallSeconds)} s`);
        if (index === 0) measured[quality] = { bytes: (await stat(output)).size, ssim: await lumaSsim(output, clip) };
      }
    }
    const wall = (quality: Quality) => samples[quality].map((sample) => sample.wallSeconds);
    const cpu = (quality: Quality) => samples[quality].map((sample) => sample.cpuSeconds);
    const table = Object.fromEntries(
      QUALITY_CHOICES.map((quality) => [
        quality,
        {
          setting: QUALITY_PRESETS[quality],
          median_wall_seconds: round(median(wall(quality))),
          median_cpu_seconds: round(median(cpu(quality))),
          realtime_factor: round(seconds / median(wall(quality)), 3),
          output_bytes: measured[quality].bytes,
          round_trip_luma_ssim: round(measured[quality].ssim, 4),
        },
      ]),
    );
    const against = (
      quality: Exclude<Quality, 'balanced'>,
      target: BenchResult['target'],
      met: (r: number) => boolean,
    ) =>
      compare(
        `presets: ${quality} vs balanced`,
        `sdr2hdr ${width}x${height} ${seconds} s encode at quality "${quality}" against "balanced" (CPU seconds of the encode)`,
        { metric: 'CPU seconds', ours: cpu(quality), bare: cpu('balanced'), higherIsBetter: false },
        { text: target, met },
        { clip: `${width}x${height} ${seconds}s testsrc2 + sine`, rounds, presets: table },
      );
    return [
      against('fast', '< 1 (faster than balanced)', (ratio) => ratio < 1),
      against('best', 'SSIM ≥ 0.95 (slower is its price)', () => measured.best.ssim >= 0.95),
    ];
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
