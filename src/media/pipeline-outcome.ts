// What every media pipeline shares: how it is run (signal, time budget, progress) and the one shape of its
// failure, a catalogue code with a message safe to show a customer. A pipeline never throws for media or
// process outcomes; it returns a PipelineFailure made here, so each process status maps to one code.
import { rm } from 'node:fs/promises';
import type { PipelineErrorCode } from './media.types';
import type { MediaProcessResult } from './run-ffmpeg';

export interface PipelineRunOptions {
  signal?: AbortSignal;
  /** Wall-clock budget for the whole pipeline (all its ffmpeg runs). */
  timeLimitMs?: number;
  onProgress?: (fraction: number) => void;
  progressIntervalMs?: number;
  ffmpegPath?: string;
  ffprobePath?: string;
}

export interface PipelineFailure {
  ok: false;
  code: PipelineErrorCode;
  /** Safe to show a customer. */
  message: string;
  /** For logs only (paths, ffmpeg internals). */
  stderrTail: string[];
  wallMs: number;
}

const OVERRAN =
  'The source holds more media than its headers declare (and than was priced): it was stopped at the priced length. It was not processed and you were not charged; submit it again re-wrapped (e.g. ffmpeg -c copy) to have it priced as it is.';

/**
 * The most an encode may write: what was probed (and checked against the price), plus a second for the
 * last frame's or audio packet's length and ffmpeg's progress granularity. An honest file never gets near it.
 */
export function encodeCeiling(probedSeconds: number): number {
  return probedSeconds + 1;
}

const PROCESS_FAILURES: Record<Exclude<MediaProcessResult['status'], 'succeeded'>, [PipelineErrorCode, string]> = {
  timeout: ['timeout', 'Processing took longer than the job time limit.'],
  aborted: ['job_cancelled', 'The job was cancelled.'],
  killed: ['out_of_memory', 'The media process ran out of memory.'],
  failed: ['processing_failed', 'Processing failed.'],
};

export function processFailure(run: MediaProcessResult & { overran?: boolean }, started: number): PipelineFailure {
  if (run.overran) return failure('source_changed', OVERRAN, run.stderrTail, started);
  const status = run.status === 'succeeded' ? 'failed' : run.status;
  const [code, message] = PROCESS_FAILURES[status];
  return failure(code, message, run.stderrTail, started);
}

export function failure(
  code: PipelineErrorCode,
  message: string,
  stderrTail: string[],
  started: number,
): PipelineFailure {
  return { ok: false, code, message, stderrTail, wallMs: Date.now() - started };
}

// A probe made with allowEncrypted (at submit) can reach a pipeline: decoding CENC "works" and yields garbage.
export function encryptedFailure(started: number): PipelineFailure {
  return failure('drm_protected', 'The input is encrypted (DRM/CENC) and cannot be processed.', [], started);
}

export function remaining(deadline: number | undefined): number | undefined {
  // A spent budget still gets 1 ms so the step starts and is killed as 'timeout' through the same path.
  return deadline === undefined ? undefined : Math.max(1, deadline - Date.now());
}

export function processedSeconds(outTimeSeconds: number | null, probedSeconds: number): number {
  return outTimeSeconds !== null && outTimeSeconds > 0 ? Math.min(outTimeSeconds, probedSeconds) : probedSeconds;
}

/** A killed or failed ffmpeg leaves a truncated file behind; it must never be mistaken for an output. */
export async function removePartial(path: string): Promise<void> {
  await rm(path, { force: true });
}
