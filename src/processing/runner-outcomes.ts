// What the production runner answers once ffmpeg or ffprobe has ended: a made output with its media
// type, a source that ended early, a probe that failed (src/processing/ffmpeg-media-runner.ts).
import { rm } from 'node:fs/promises';
import { truncatedSource } from '../jobs/decoded-length';
import { OUTPUT_CONTENT_TYPES } from '../jobs/output-options';
import type { ProbeOutcome } from '../media/media.types';
import type { MadeOutput } from './media-runner';

export function made(
  path: string,
  container: string,
  processedSeconds: number,
  picture: { width: number; height: number } | null,
  media: Record<string, unknown>,
): MadeOutput {
  return {
    ok: true,
    path,
    processedSeconds,
    outputWidth: picture?.width ?? 0,
    outputHeight: picture?.height ?? 0,
    container,
    contentType: OUTPUT_CONTENT_TYPES[container as keyof typeof OUTPUT_CONTENT_TYPES],
    media,
  };
}

/**
 * A source that decoded more than a second short of what its container declares is truncated or
 * corrupt (src/jobs/decoded-length.ts): invalid_media, its partial output deleted, charged 0.
 */
export async function endedEarly(
  output: string,
  declaredSeconds: number,
  decodedSeconds: number,
): Promise<{ ok: false; code: 'invalid_media'; message: string } | null> {
  const message = truncatedSource(declaredSeconds, decodedSeconds);
  if (!message) return null;
  await rm(output, { force: true });
  return { ok: false, code: 'invalid_media', message };
}

/** A probe of our own local file that ran out of time is the machine's trouble, not the media's. */
export function probeFailure(probed: Extract<ProbeOutcome, { ok: false }>): {
  ok: false;
  code: ProbeOutcomeCode;
  message: string;
} {
  return { ok: false, code: probed.code === 'timeout' ? 'processing_failed' : probed.code, message: probed.message };
}

type ProbeOutcomeCode = Exclude<Extract<ProbeOutcome, { ok: false }>['code'], 'timeout'> | 'processing_failed';

export function round(value: number): number | null {
  return Number.isFinite(value) ? Math.round(value * 10) / 10 : null;
}
