// Benchmark "storage" (issue 13): the S3 backend against bare baselines, all against one private Swift
// (s3api) on loopback, side by side in one run:
// - upload: POST /v1/uploads to an API on S3 vs a bare @aws-sdk/lib-storage Upload of the same file
//   to the same server (target ≥ 0.8× its throughput);
// - job: a 10 s 1080p sdr2hdr job submit → succeeded on the S3 backend vs the local backend (≤ 1.05×);
// - download: an output through the API's signed link (what we serve) vs a presigned GET straight from
//   the store (the alternative we did not choose; README "Object storage" says why).
import { S3Client } from '@aws-sdk/client-s3';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { createS3Client } from '../src/common/storage/s3-client';
import { PARALLEL_PARTS, PART_BYTES } from '../src/common/storage/s3-storage';
import { startSwift } from '../test/support/swift';
import { getJob, streamUploadFile, uploadFile } from './lib/client';
import { createEnvironment, type BenchEnvironment } from './lib/environment';
import { sdrClip } from './lib/media';
import { cpuMsOf, startProcess, type Service } from './lib/processes';
import { compare, type BenchContext, type BenchResult } from './lib/report';
import { startStack, submitWhenReady, waitForJob, type Stack } from './lib/stack';
import { alternate, median, round } from './lib/stats';

const MiB = 1024 * 1024;

async function randomFile(dir: string, bytes: number): Promise<string> {
  const path = join(dir, `random-${bytes}.bin`);
  const out = createWriteStream(path);
  for (let written = 0; written < bytes; written += MiB) {
    if (!out.write(randomBytes(Math.min(MiB, bytes - written)))) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  return path;
}

async function drain(response: Response): Promise<number> {
  if (!response.ok) throw new Error(`download: HTTP ${response.status}`);
  let bytes = 0;
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) bytes += chunk.length;
  return bytes;
}

async function timed(action: () => Promise<unknown>): Promise<number> {
  const started = process.hrtime.bigint();
  await action();
  return Number(process.hrtime.bigint() - started) / 1e9;
}

/** A finished job's view; throws unless it succeeded. */
async function runJob(stack: Stack, uploadId: string): Promise<any> {
  const submitted = await submitWhenReady(stack, { inputs: [{ upload_id: uploadId }] });
  const job = await waitForJob(stack, submitted.job_id);
  if (job.status !== 'succeeded') throw new Error(`storage bench: job ${job.job_id} ended ${job.status}`);
  return job;
}

/** `uploadOnly` (`--only=storage-upload`): the upload comparison alone, without the jobs and downloads. */
export async function benchStorage(context: BenchContext, uploadOnly = false): Promise<BenchResult[]> {
  const uploadBytes = (context.quick ? 32 : 200) * MiB;
  const uploadRounds = context.quick ? 2 : 5;
  const [width, height, seconds] = context.quick ? [640, 360, 1] : [1920, 1080, 10];
  const jobRounds = context.quick ? 1 : 3;
  const scratch = await mkdtemp(join(tmpdir(), 'mediajobs-bench-storage-'));
  const swift = await startSwift();
  const bucket = `mj-bench-${process.pid}`;
  const s3Env = swift.env(bucket, 'bench/');
  const settings = {
    bucket,
    prefix: '',
    endpoint: swift.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: swift.accessKeyId, secretAccessKey: swift.secretAccessKey },
  };
  const client: S3Client = createS3Client(settings);
  const localEnv = await createEnvironment('storagelocal');
  const s3Base = await createEnvironment('storages3');
  const onS3: BenchEnvironment = { ...s3Base, serviceEnv: { ...s3Base.serviceEnv, ...s3Env } };
  const stacks: Stack[] = [];
  const bareProcesses: Service[] = [];
  try {
    const s3Stack = await startStack(onS3, 'benchs3', 1_000_000);
    stacks.push(s3Stack);
    const localStack = await startStack(localEnv, 'benchlocal', 1_000_000);
    stacks.push(localStack);

    // --- upload throughput. Both sides store the same file in the same parts (size and how many in
    // flight) on the same Swift, alternately, after one warm-up each: ours through the API, bare with
    // lib-storage in a small process of its own (bench/bare/s3-upload-server.ts). Our client streams the
    // file with node:http in 1 MiB reads (bench/lib/client.ts says why). The CPU each uploading
    // process spends per MiB (from /proc, robust to load) is kept beside the throughput.
    context.log(`storage: upload ${uploadBytes / MiB} MiB × ${uploadRounds}`);
    const file = await randomFile(scratch, uploadBytes);
    const { size } = await stat(file);
    const bareUploader = await startProcess('dist-bench/bench/bare/s3-upload-server.js', {
      S3_BUCKET: bucket,
      S3_ENDPOINT: swift.endpoint,
      AWS_ACCESS_KEY_ID: swift.accessKeyId,
      AWS_SECRET_ACCESS_KEY: swift.secretAccessKey,
      UPLOAD_FILE: file,
      PART_BYTES: String(PART_BYTES),
      PARTS_IN_FLIGHT: String(PARALLEL_PARTS),
    });
    bareProcesses.push(bareUploader);
    const bareUpload = async (round: number) => {
      const response = await fetch(`${bareUploader.url}/upload?key=bare/upload-${round}`, { method: 'POST' });
      if (!response.ok) throw new Error(`bare upload: HTTP ${response.status} ${await response.text()}`);
    };
    const oursUpload = () => streamUploadFile(s3Stack.api.url, s3Stack.account.apiKey, file, size);
    /** MiB/s of one upload, and the CPU ms per MiB of the process that uploaded it. */
    const measure = async (pid: number, upload: () => Promise<unknown>, cpu: number[]) => {
      const before = await cpuMsOf(pid);
      const seconds = await timed(upload);
      cpu.push(((await cpuMsOf(pid)) - before) / (size / MiB));
      return size / MiB / seconds;
    };
    const loadBefore = loadavg()[0];
    await oursUpload();
    await bareUpload(-1);
    const cpu = { ours: [] as number[], bare: [] as number[] };
    const uploads = await alternate<number>(
      uploadRounds,
      () => measure(s3Stack.api.pid, oursUpload, cpu.ours),
      (n) => measure(bareUploader.pid, () => bareUpload(n), cpu.bare),
    );
    const uploadResult = compare(
      'storage-upload',
      `${uploadBytes / MiB} MiB through POST /v1/uploads (API on S3: streamed multipart, SHA-256 and limit on the way) vs a bare lib-storage Upload of the same file to the same Swift, both in ${PART_BYTES / MiB} MiB parts, ${PARALLEL_PARTS} in flight`,
      { metric: 'MiB/s', ours: uploads.ours, bare: uploads.bare, higherIsBetter: true },
      { text: '≥ 0.8 × the bare throughput', met: (ratio) => ratio >= 0.8 },
      {
        store: 'OpenStack Swift s3api on loopback',
        part_bytes: PART_BYTES,
        parts_in_flight: PARALLEL_PARTS,
        client: 'node:http, 1 MiB reads',
        api_cpu_ms_per_mib: round(median(cpu.ours)),
        bare_cpu_ms_per_mib: round(median(cpu.bare)),
        load_average: [round(loadBefore), round(loadavg()[0])],
      },
    );

    if (uploadOnly) return [uploadResult];

    // --- a whole job, S3 vs local
    context.log(`storage: ${seconds} s ${width}×${height} job × ${jobRounds} on S3 and on local`);
    const clip = await sdrClip(width, height, seconds);
    const warmUp = await sdrClip(320, 180, 1);
    for (const stack of [s3Stack, localStack])
      await runJob(stack, await uploadFile(stack.api.url, stack.account.apiKey, warmUp));
    const onS3Upload = await uploadFile(s3Stack.api.url, s3Stack.account.apiKey, clip);
    const onLocalUpload = await uploadFile(localStack.api.url, localStack.account.apiKey, clip);
    let lastS3Job: any;
    const jobs = await alternate<number>(
      jobRounds,
      async () => timed(async () => (lastS3Job = await runJob(s3Stack, onS3Upload))),
      async () => timed(() => runJob(localStack, onLocalUpload)),
    );
    const jobResult = compare(
      'storage-job',
      `${seconds} s ${width}×${height} sdr2hdr job, submit → succeeded, STORAGE_BACKEND=s3 (Swift) vs local`,
      { metric: 'seconds', ours: jobs.ours, bare: jobs.bare, higherIsBetter: false },
      { text: '≤ 1.05 × the local backend', met: (ratio) => ratio <= 1.05 },
      {},
    );

    // --- downloads: streamed through the API vs a presigned redirect target
    const output = (await getJob(s3Stack.api.url, s3Stack.account.apiKey, lastS3Job.job_id)).items[0].output;
    const key = (
      await onS3.query<{ storage_key: string }>('SELECT storage_key FROM assets WHERE id = $1', [output.asset_id])
    )[0].storage_key;
    const downloadRounds = context.quick ? 3 : 9;
    const downloads = await alternate<number>(
      downloadRounds,
      async () => output.size_bytes / MiB / (await timed(async () => drain(await fetch(output.url)))),
      async () => {
        const url = await getSignedUrl(client, new GetObjectCommand({ Bucket: bucket, Key: `bench/${key}` }), {
          expiresIn: 60,
        });
        return output.size_bytes / MiB / (await timed(async () => drain(await fetch(url))));
      },
    );
    const downloadResult = compare(
      'storage-download',
      `a ${round(output.size_bytes / MiB, 1)} MiB output through the signed API link (streamed from S3) vs a presigned GET straight from Swift`,
      { metric: 'MiB/s', ours: downloads.ours, bare: downloads.bare, higherIsBetter: true },
      { text: 'informational (stream chosen for the contract; ≥ 0.5 × expected)', met: (ratio) => ratio >= 0.5 },
      { download_bytes: output.size_bytes, median_ours: round(median(downloads.ours)) },
    );
    return [uploadResult, jobResult, downloadResult];
  } finally {
    for (const stack of stacks) await stack.close();
    for (const bare of bareProcesses) await bare.stop();
    await localEnv.close();
    await s3Base.close();
    await swift.stop();
    await rm(scratch, { recursive: true, force: true });
  }
}
