// The renditions of an item's HLS package: one rule, pure, which the submit prices (every rung's
// pixels × seconds) and the worker encodes, so the estimate names exactly the rungs that will be made.
import { outputSize } from './output-geometry';
import type { LadderSpec, RungSpec } from './output-spec';

/** The HDR rungs asked for when the client names none: the first four at or below the source. */
export const DEFAULT_HDR_LINES = [2160, 1440, 1080, 720, 540, 360];
export const DEFAULT_HDR_RUNGS = 4;
export const LADDER_SEGMENT_SECONDS = 4;
export const LADDER_AUDIO_KBPS = 128;

/** SDR rungs (H.264 from the source) are cut at these lines: the highest at or below the source, and two steps down. */
const SDR_LINES = [1080, 720, 540, 360];

/**
 * Target bitrates (kbit/s) by lines, after Apple's HLS authoring specification's example ladders
 * (HEVC/HDR and H.264/SDR); AV1 at 80 % of HEVC's. Lines between two entries take the higher's rate.
 */
const HEVC_KBPS: Record<number, number> = { 2160: 16800, 1440: 8100, 1080: 5800, 720: 3400, 540: 2000, 360: 900 };
const H264_KBPS: Record<number, number> = { 1080: 6000, 720: 3000, 540: 2000, 360: 730 };
const AV1_SHARE_OF_HEVC = 0.8;

/** The default ladder's HDR lines for a source whose short side is `sourceLines`. */
export function defaultHdrLines(sourceLines: number): number[] {
  const fitting = DEFAULT_HDR_LINES.filter((lines) => lines <= sourceLines).slice(0, DEFAULT_HDR_RUNGS);
  return fitting.length > 0 ? fitting : [evenFloor(sourceLines)];
}

/**
 * A job's ladder as the submit resolves it: the client's HDR lines (`output.ladder`, highest first), or
 * the default ladder — DEFAULT_HDR_LINES up to `maxLines` (the plan's largest output, so a default is
 * never refused by the plan) with the DEFAULT_HDR_RUNGS cut, which itemRungs applies per source
 * (defaultHdrLines is that cut for one source). Stored whole with the job, so a default changed later
 * changes no job already accepted.
 */
export function ladderSpec(
  askedLines: number[] | null,
  hdrCodecs: LadderSpec['hdrCodecs'],
  maxLines: number,
): LadderSpec {
  const common = { segmentSeconds: LADDER_SEGMENT_SECONDS, hdrCodecs, audioKbps: LADDER_AUDIO_KBPS };
  if (askedLines) return { ...common, hdrLines: [...askedLines].sort((a, b) => b - a) };
  const hdrLines = DEFAULT_HDR_LINES.filter((lines) => lines <= maxLines);
  return { ...common, hdrLines, maxHdrRungs: DEFAULT_HDR_RUNGS };
}

/**
 * An item's rungs, highest first within each codec: the ladder's HDR lines at or below the source (at most
 * `maxHdrRungs` of them, the highest) in each HDR codec (in the job's transfer), then the SDR rungs. A
 * source below every asked line gets one HDR rung at its own size; sides are even and never above the
 * source's (output-geometry.ts).
 */
export function itemRungs(
  ladder: LadderSpec,
  transfer: 'pq' | 'hlg',
  source: { width: number; height: number },
): RungSpec[] {
  const sourceLines = Math.min(source.width, source.height);
  const fitting = ladder.hdrLines.filter((lines) => lines <= sourceLines).slice(0, ladder.maxHdrRungs);
  const hdrLines = fitting.length > 0 ? fitting : [evenFloor(sourceLines)];
  const range = transfer === 'hlg' ? 'HLG' : 'PQ';
  const hdr = ladder.hdrCodecs.flatMap((codec) =>
    hdrLines.map((lines) => rung(codec, range, source, lines, codec === 'av1' ? AV1_SHARE_OF_HEVC : 1)),
  );
  return [...hdr, ...sdrLines(sourceLines).map((lines) => rung('h264', 'SDR', source, lines, 1))];
}

function sdrLines(sourceLines: number): number[] {
  const top = SDR_LINES.findIndex((lines) => lines <= sourceLines);
  if (top < 0) return [evenFloor(sourceLines)];
  const lower = Math.min(top + 2, SDR_LINES.length - 1);
  return lower === top ? [SDR_LINES[top]] : [SDR_LINES[top], SDR_LINES[lower]];
}

function rung(
  codec: RungSpec['codec'],
  range: RungSpec['range'],
  source: { width: number; height: number },
  lines: number,
  share: number,
): RungSpec {
  const { width, height } = outputSize(source, lines);
  const table = codec === 'h264' ? H264_KBPS : HEVC_KBPS;
  return { codec, range, width, height, bitrateKbps: Math.round(rateFor(table, lines) * share) };
}

function rateFor(table: Record<number, number>, lines: number): number {
  const steps = Object.keys(table)
    .map(Number)
    .sort((a, b) => a - b);
  const step = steps.find((candidate) => candidate >= lines) ?? steps[steps.length - 1];
  return table[step];
}

function evenFloor(value: number): number {
  return Math.max(2, value - (value % 2));
}
