// Measurements a run made of the bytes it wrote, and the one rule for using them in the output check:
// only while the file is byte for byte what was measured (its SHA-256 then and now). A file replaced or
// changed after the run (by anything — the tests' wrong-output runner does it on purpose) is measured
// afresh from the file. What must be read back whatever the run saw — the container's tags and side data,
// the frame count, the durations — the check always reads from the file (src/media/output-measure.ts).
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { LoudnessFigures } from '../media/output-measure';

export interface RunMeasurements {
  /** SHA-256 (hex) of the output file as the run left it. */
  sha256: string;
  /** Round-trip luma SSIM of the output read back from disk (sdr2hdr, PQ, one pass: pipelines.ts). */
  roundTripSsim?: number;
  /** EBU R128 of the exact samples the PCM encoder wrote (audio, WAV: pipelines.ts `written`). */
  loudness?: LoudnessFigures;
}

export async function fileSha256(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Whether the file at `path` is still byte for byte the one hashed as `sha256` when it was measured. */
export async function stillTheFile(path: string, sha256: string | undefined): Promise<boolean> {
  return sha256 !== undefined && (await fileSha256(path)) === sha256;
}

/** The run's measurements when the file is still the one they were made of; otherwise none. */
export async function stillMeasured(path: string, measured: RunMeasurements | undefined): Promise<RunMeasurements> {
  return measured && (await stillTheFile(path, measured.sha256)) ? measured : { sha256: '' };
}
