// What a local media file is, read from its headers without decoding: duration and picture size of
// MP4/MOV/M4A (ISO BMFF boxes mvhd, tkhd of the video track) and WAV (fmt and data chunks). Enough for
// an estimate (`inputs[i].media`) before the file is uploaded; null when the file is not readable this way.

import { open, type FileHandle } from 'node:fs/promises';

export interface DescribedMedia {
  duration_seconds: number;
  width?: number;
  height?: number;
}

/** A moov box larger than this is not read (a real one is kilobytes to a few megabytes). */
const MAX_MOOV_BYTES = 64 * 1024 * 1024;

export async function describeMedia(path: string): Promise<DescribedMedia | null> {
  const file = await open(path, 'r');
  try {
    const head = await read(file, 0, 12);
    if (head.length >= 12 && head.toString('latin1', 0, 4) === 'RIFF' && head.toString('latin1', 8, 12) === 'WAVE') {
      return await describeWav(file);
    }
    return await describeIsoBmff(file);
  } catch {
    // Unreadable headers: the service probes the file after upload instead.
    return null;
  } finally {
    await file.close();
  }
}

async function read(file: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  const { bytesRead } = await file.read(buffer, 0, length, position);
  return buffer.subarray(0, bytesRead);
}

async function describeWav(file: FileHandle): Promise<DescribedMedia | null> {
  const size = (await file.stat()).size;
  let byteRate = 0;
  for (let position = 12; position + 8 <= size;) {
    const header = await read(file, position, 20);
    const id = header.toString('latin1', 0, 4);
    const length = header.readUInt32LE(4);
    // fmt payload: format (2), channels (2), sample rate (4), byte rate (4).
    if (id === 'fmt ' && header.length >= 20) byteRate = header.readUInt32LE(8 + 8);
    if (id === 'data')
      return byteRate > 0 ? { duration_seconds: Math.min(length, size - position - 8) / byteRate } : null;
    position += 8 + length + (length % 2);
  }
  return null;
}

interface Box {
  type: string;
  /** The payload (after the header). */
  body: Buffer;
}

function* children(buffer: Buffer): Generator<Box> {
  for (let offset = 0; offset + 8 <= buffer.length;) {
    let size = buffer.readUInt32BE(offset);
    const type = buffer.toString('latin1', offset + 4, offset + 8);
    let header = 8;
    if (size === 1) {
      size = Number(buffer.readBigUInt64BE(offset + 8));
      header = 16;
    } else if (size === 0) size = buffer.length - offset;
    if (size < header || offset + size > buffer.length) return;
    yield { type, body: buffer.subarray(offset + header, offset + size) };
    offset += size;
  }
}

const child = (box: Buffer, type: string): Buffer | undefined => {
  for (const found of children(box)) if (found.type === type) return found.body;
  return undefined;
};

async function describeIsoBmff(file: FileHandle): Promise<DescribedMedia | null> {
  const size = (await file.stat()).size;
  // Top-level boxes are walked by their headers only, so a large mdat before moov is never read.
  for (let position = 0; position + 8 <= size;) {
    const header = await read(file, position, 16);
    let boxSize = header.readUInt32BE(0);
    const type = header.toString('latin1', 4, 8);
    let headerSize = 8;
    if (boxSize === 1) {
      boxSize = Number(header.readBigUInt64BE(8));
      headerSize = 16;
    } else if (boxSize === 0) boxSize = size - position;
    if (boxSize < headerSize) return null;
    if (type === 'moov') {
      if (boxSize > MAX_MOOV_BYTES) return null;
      return parseMoov(await read(file, position + headerSize, boxSize - headerSize));
    }
    position += boxSize;
  }
  return null;
}

function parseMoov(moov: Buffer): DescribedMedia | null {
  const mvhd = child(moov, 'mvhd');
  if (!mvhd) return null;
  const version = mvhd.readUInt8(0);
  const timescale = version === 1 ? mvhd.readUInt32BE(20) : mvhd.readUInt32BE(12);
  const duration = version === 1 ? Number(mvhd.readBigUInt64BE(24)) : mvhd.readUInt32BE(16);
  if (!timescale) return null;
  const described: DescribedMedia = { duration_seconds: duration / timescale };
  for (const box of children(moov)) {
    if (box.type !== 'trak') continue;
    const handler = child(child(box.body, 'mdia') ?? Buffer.alloc(0), 'hdlr');
    if (!handler || handler.toString('latin1', 8, 12) !== 'vide') continue;
    const tkhd = child(box.body, 'tkhd');
    if (!tkhd || tkhd.length < 8) continue;
    // Width and height are the box's last two 16.16 fixed-point numbers.
    described.width = Math.round(tkhd.readUInt32BE(tkhd.length - 8) / 65536);
    described.height = Math.round(tkhd.readUInt32BE(tkhd.length - 4) / 65536);
    break;
  }
  return described;
}
