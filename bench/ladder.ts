// Benchmark: an HLS ladder (issue 41). One sdr2hdr job with `output.package: hls` (the default ladder: for a
// 1080p source 4 HEVC HDR10 rungs and 2 H.264 SDR rungs), submit → succeeded, against the same renditions
// made by hand with bare ffmpeg one rendition after another — each run decoding the source, with our own
// argv for that one rung (ladder-args.ts: the same filters and encoder settings, x265 confined to one core
// as a pinned worker's is), then the audio. Two comparisons in the same run, alternating:
// - one worker pinned to one core (taskset), the item in one pass (SEGMENT_SECONDS=0), against bare on
//   that core: target ≤ 1.05;
// - two workers pinned to a core each (standing in for two machines), the item split into units
//   (SEGMENT_SECONDS), against the same bare: target ≤ 0.6.
// It also times a bare decode of the source on one core: what a "rung × segment" unit would add per extra
// rung (each such unit decodes its range again), against our "segment with every rung" unit.
import { execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { buildExpandCube, usesMappingLut } from '../src/media/hdr-mapping';
import { buildLadderArgs, hlsArgs } from '../src/media/hls/ladder-args';
import { renditionFolder } from '../src/media/hls/rendition-names';
import { itemRungs } from '../src/media/ladder';
import type { HdrOutputSpec } from '../src/media/output-spec';
import { probeMedia } from '../src/media/probe';
import { createAccount, getJob, submitJob, uploadFile } from './lib/client';
import { createEnvironment } from './lib/environment';
import { sdrClip } from './lib/media';
import { sleep, startProcess, type Service } from './lib/processes';
import { compare, type BenchContext, type BenchResult } from './lib/report';
import { median, round } from './lib/stats';

const exec = promisify(execFile);

async function pin(service: Service, core: number): Promise<void> {
  // -a: every thread of the process; ffmpeg children inherit the affinity.
  await exec('taskset', ['-a', '-cp', String(core), String(service.pid)]);
}

/** ffmpeg pinned to core 0; its wall seconds. */
async function pinnedFfmpeg(args: string[]): Promise<number> {
  const started = Date.now();
  await new Promise<void>((resolve, reject) => {
    const child = spawn('taskset', ['-c', '0', process.env.FFMPEG_PATH || 'ffmpeg', ...args], { stdio: 'ignore' });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`bare ffmpeg exited ${code}`))));
  });
  return (Date.now() - started) / 1000;
}

export async function benchLadder(context: BenchContext): Promise<BenchResult[]> {
  // BENCH_LADDER_CLIP=<width>x<height>x<seconds>x<unit seconds> overrides the clip (e.g. on a loaded machine).
  const override = process.env.BENCH_LADDER_CLIP?.split('x').map(Number);
  const [width, height, seconds, unitSeconds] =
    override?.length === 4 ? override : context.quick ? [640, 360, 16, 4] : [1920, 1080, 60, 8];
  const rounds = context.quick ? 1 : Number(process.env.BENCH_LADDER_ROUNDS ?? 1);
  const output = { package: 'hls' };
  const clip = await sdrClip(width, height, seconds);
  const env = await createEnvironment('ladder');
  const services: Service[] = [];
  const scratch = await mkdtemp(join(tmpdir(), 'mediajobs-bench-ladder-'));
  try {
    const api = await startProcess('dist/src/main.js', { ...env.serviceEnv, REGION: 'blad2' });
    services.push(api);
    const worker = async (region: string, split: number, core: number) => {
      const service = await startProcess(
        'dist/src/worker.js',
        { ...env.serviceEnv, REGION: region, WORKER_CONCURRENCY: '1', SEGMENT_SECONDS: String(split) },
        { listen: false },
      );
      services.push(service);
      await pin(service, core);
    };
    await worker('blad2', unitSeconds, 0);
    await worker('blad2', unitSeconds, 1);
    await worker('blad1', 0, 0);
    const account = await createAccount(env, api.url, 10_000_000);
    const submit = async (region: string, uploadId: string): Promise<string> => {
      for (let attempt = 0; ; attempt++) {
        try {
          return (await submitJob(api.url, account.apiKey, { inputs: [{ upload_id: uploadId }], region, output }))
            .job_id;
        } catch (error) {
          if (attempt > 200 || !String(error).includes('region_unavailable')) throw error;
          await sleep(100);
        }
      }
    };
    const finish = async (jobId: string): Promise<any> => {
      for (;;) {
        const job = await getJob(api.url, account.apiKey, jobId);
        if (!['queued', 'processing'].includes(job.status)) {
          if (job.status !== 'succeeded') throw new Error(`ladder: job ${jobId} ended ${job.status}`);
          return job;
        }
        await sleep(200);
      }
    };
    // Warm-up on both regions (not measured); its stored spec is what the bare runs encode with.
    const warm = await uploadFile(api.url, account.apiKey, await sdrClip(320, 180, 1));
    const warmJob = await submit('blad2', warm);
    await finish(warmJob);
    await finish(await submit('blad1', warm));
    const [{ output_spec: spec }] = await env.query<{ output_spec: HdrOutputSpec }>(
      'SELECT output_spec FROM jobs WHERE id = $1',
      [warmJob],
    );
    const uploadId = await uploadFile(api.url, account.apiKey, clip);

    const probed = await probeMedia(clip, { api: 'sdr2hdr' });
    if (!probed.ok || !probed.probe.video || !spec.ladder) throw new Error('ladder: the clip does not probe');
    const probe = probed.probe;
    const ladder = spec.ladder;
    const rungs = itemRungs(ladder, spec.transfer, probe.video!);
    const hdr = { mapping: spec.mapping, transfer: spec.transfer, peakNits: spec.peakNits, preset: spec.preset };
    let lutPath: string | undefined;
    if (usesMappingLut(hdr)) {
      lutPath = join(scratch, 'mapping.cube');
      const video = probe.video!;
      await writeFile(
        lutPath,
        buildExpandCube({ choice: hdr, sourcePrimaries: video.colorPrimaries, sourceTransfer: video.colorTransfer }),
      );
    }

    const units: { workers: number; units: number }[] = [];
    const ours = (region: 'blad1' | 'blad2') => async () => {
      const started = Date.now();
      const jobId = await submit(region, uploadId);
      await finish(jobId);
      const wall = (Date.now() - started) / 1000;
      const rows = await env.query<{ worker: string }>('SELECT worker FROM item_segments WHERE job_id = $1', [jobId]);
      if (region === 'blad2') units.push({ units: rows.length, workers: new Set(rows.map((r) => r.worker)).size });
      context.log(`ladder: ${region === 'blad1' ? '1 worker' : '2 workers'} ${round(wall)} s (${rows.length} units)`);
      return wall;
    };
    const bare = async () => {
      let total = 0;
      for (const rung of rungs) {
        const dir = join(scratch, 'bare');
        const args = buildLadderArgs({
          input: clip,
          probe: { ...probe, audio: undefined },
          rungs: [rung],
          ladder,
          hdr,
          lutPath,
          dir,
          confinedCpus: 1,
        });
        await rm(join(dir, renditionFolder(rung)), { recursive: true, force: true });
        await mkdir(join(dir, renditionFolder(rung)), { recursive: true });
        total += await pinnedFfmpeg(args);
      }
      if (probe.audio) {
        const folder = join(scratch, 'bare', 'audio');
        await rm(folder, { recursive: true, force: true });
        await mkdir(folder, { recursive: true });
        const audio = ['-i', clip, '-map', `0:${probe.audio.index}`, '-c:a', 'aac', '-b:a', `${ladder.audioKbps}k`];
        total += await pinnedFfmpeg([
          '-hide_banner',
          '-loglevel',
          'error',
          '-y',
          ...audio,
          '-ac',
          '2',
          ...hlsArgs(folder, ladder.segmentSeconds),
        ]);
      }
      context.log(`ladder: bare ${round(total)} s (${rungs.length} renditions + audio, one after another)`);
      return total;
    };
    // Per round: bare, then ours on one worker and on two — the order of ours swapped every round.
    const one = { ours: [] as number[] };
    const two = { ours: [] as number[] };
    const bareAll: number[] = [];
    for (let n = 0; n < rounds; n++) {
      bareAll.push(await bare());
      const order = n % 2 === 0 ? (['blad1', 'blad2'] as const) : (['blad2', 'blad1'] as const);
      for (const region of order) (region === 'blad1' ? one : two).ours.push(await ours(region)());
    }
    const decode = await pinnedFfmpeg(['-hide_banner', '-loglevel', 'error', '-i', clip, '-an', '-f', 'null', '-']);
    const details = {
      clip: `${seconds} s ${width}×${height} 30 fps`,
      rungs: rungs.map((rung) => `${rung.codec} ${rung.height} ${rung.range}`),
      unit_seconds: unitSeconds,
      units: units[0]?.units,
      unit_workers: units[0]?.workers,
      bare_seconds: round(median(bareAll), 1),
      decode_seconds_one_core: round(decode, 2),
      rung_x_segment_extra_seconds: round((rungs.length - 1) * decode, 1),
      load_average_1_5_15: loadavg().map((value) => round(value, 2)),
    };
    const what = `${seconds} s ${width}×${height} → ${rungs.length} renditions + audio, submit → succeeded × ${rounds}`;
    return [
      compare(
        'ladder-1-worker',
        `${what}: 1 worker pinned to one core (one pass) vs bare ffmpeg one rendition after another on that core`,
        { metric: 'seconds', ours: one.ours, bare: bareAll, higherIsBetter: false },
        { text: '≤ 1.05 × bare', met: (ratio) => ratio <= 1.05 },
        details,
      ),
      compare(
        'ladder-2-workers',
        `${what}: 2 workers pinned to a core each (units of ${unitSeconds} s) vs the same bare on one core`,
        { metric: 'seconds', ours: two.ours, bare: bareAll, higherIsBetter: false },
        { text: '≤ 0.6 × bare', met: (ratio) => ratio <= 0.6 },
        details,
      ),
    ];
  } finally {
    for (const service of services.reverse()) await service.stop();
    await env.close();
    await rm(scratch, { recursive: true, force: true });
  }
}
