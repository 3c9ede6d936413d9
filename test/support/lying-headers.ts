// Makes an MP4/MOV/M4A whose headers lie about its length (issue 29 item 1): the movie, track and media
// header durations (mvhd, tkhd, mdhd) are rewritten to claim `seconds`, while the samples, their
// timing (stts) and the edit lists stay as they were — so a decoder still produces every sample.
// It walks the box tree (moov → trak → mdia) rather than searching for byte patterns, and handles
// version 0 (32-bit) and version 1 (64-bit) headers and 64-bit box sizes.
import { readFile, writeFile } from 'node:fs/promises';

interface Box {
  type: string;
  start: number;
  payload: number;
  end: number;
}

/** Boxes whose payload is only child boxes, on the way to the three headers. */
const CONTAINERS = new Set(['moov', 'trak', 'mdia']);

function* children(buffer: Buffer, start: number, end: number): Generator<Box> {
  let offset = start;
  while (offset + 8 <= end) {
    const size32 = buffer.readUInt32BE(offset);
    const type = buffer.toString('latin1', offset + 4, offset + 8);
    let header = 8;
    let size = size32;
    if (size32 === 1) {
      size = Number(buffer.readBigUInt64BE(offset + 8));
      header = 16;
    } else if (size32 === 0) {
      size = end - offset;
    }
    if (size < header || offset + size > end) throw new Error(`malformed box ${type} at ${offset}`);
    yield { type, start: offset, payload: offset + header, end: offset + size };
    offset += size;
  }
}

/** Writes the duration field of a full box whose layout is (version, flags, times…, timescale?, duration). */
function writeDuration(buffer: Buffer, box: Box, units: number, layout: 'mvhd' | 'tkhd' | 'mdhd'): void {
  const version = buffer.readUInt8(box.payload);
  // After version+flags: v0 has 32-bit creation/modification times, v1 64-bit ones. tkhd then has
  // track_ID and a reserved word where mvhd/mdhd have their timescale (and no reserved word).
  const times = version === 1 ? 16 : 8;
  const afterTimes = box.payload + 4 + times;
  const durationAt = layout === 'tkhd' ? afterTimes + 8 : afterTimes + 4;
  if (version === 1) buffer.writeBigUInt64BE(BigInt(Math.round(units)), durationAt);
  else buffer.writeUInt32BE(Math.round(units), durationAt);
}

function timescaleOf(buffer: Box & { buffer: Buffer }): number {
  const version = buffer.buffer.readUInt8(buffer.payload);
  return buffer.buffer.readUInt32BE(buffer.payload + 4 + (version === 1 ? 16 : 8));
}

export interface PatchReport {
  /** How many mvhd, tkhd and mdhd boxes were rewritten. */
  mvhd: number;
  tkhd: number;
  mdhd: number;
}

/** Rewrites the file's mvhd/tkhd/mdhd durations in place of a copy at `output`; the box tree is unchanged. */
export async function lieAboutDuration(input: string, output: string, seconds: number): Promise<PatchReport> {
  const buffer = Buffer.from(await readFile(input));
  const report: PatchReport = { mvhd: 0, tkhd: 0, mdhd: 0 };
  let movieTimescale = 0;
  const walk = (start: number, end: number): void => {
    for (const box of children(buffer, start, end)) {
      if (CONTAINERS.has(box.type)) walk(box.payload, box.end);
      else if (box.type === 'mvhd') {
        movieTimescale = timescaleOf({ ...box, buffer });
        writeDuration(buffer, box, seconds * movieTimescale, 'mvhd');
        report.mvhd++;
      } else if (box.type === 'tkhd') {
        // tkhd's duration is in the movie's timescale; mvhd comes before the tracks in moov.
        if (!movieTimescale) throw new Error('tkhd before mvhd');
        writeDuration(buffer, box, seconds * movieTimescale, 'tkhd');
        report.tkhd++;
      } else if (box.type === 'mdhd') {
        writeDuration(buffer, box, seconds * timescaleOf({ ...box, buffer }), 'mdhd');
        report.mdhd++;
      }
    }
  };
  walk(0, buffer.length);
  if (!report.mvhd || !report.tkhd || !report.mdhd)
    throw new Error(`not every header found: ${JSON.stringify(report)}`);
  await writeFile(output, buffer);
  return report;
}

/**
 * The WAV counterpart: the `data` chunk's declared size is cut to `seconds` of samples while every
 * sample stays in the file (walking the RIFF chunks, not searching for "data").
 */
export async function lieAboutWavLength(input: string, output: string, seconds: number): Promise<void> {
  const buffer = Buffer.from(await readFile(input));
  if (buffer.toString('latin1', 0, 4) !== 'RIFF' || buffer.toString('latin1', 8, 12) !== 'WAVE')
    throw new Error('not a WAV');
  let bytesPerSecond = 0;
  for (let offset = 12; offset + 8 <= buffer.length;) {
    const id = buffer.toString('latin1', offset, offset + 4);
    const size = buffer.readUInt32LE(offset + 4);
    if (id === 'fmt ') bytesPerSecond = buffer.readUInt32LE(offset + 8 + 8);
    if (id === 'data') {
      if (!bytesPerSecond) throw new Error('data before fmt');
      buffer.writeUInt32LE(Math.min(size, Math.round(seconds * bytesPerSecond)), offset + 4);
      await writeFile(output, buffer);
      return;
    }
    offset += 8 + size + (size % 2);
  }
  throw new Error('no data chunk');
}
