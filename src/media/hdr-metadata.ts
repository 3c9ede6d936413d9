// Writes an HDR10 file's measured light levels where players read them, after the encode: the HEVC
// content-light-level SEI (x265 wrote a bound before the picture existed) and the ISO-BMFF/QuickTime
// `clli` and `mdcv` boxes of the video sample entry (ffmpeg 5.1's muxer writes neither for an encode).
//
// The SEI is patched in place: x265 writes it as its own NAL unit (prefix SEI, one message: payload type 144,
// four bytes), and values that need no emulation-prevention byte keep its size, so the file is not remuxed.
// The boxes change the size of `moov`, so the file is rewritten once, with every chunk offset after `moov`
// moved by the bytes added.
import { createReadStream, createWriteStream } from 'node:fs';
import { open, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { MASTER_DISPLAY } from './hdr-args';
import type { LightLevels } from './light-levels';

/** prefix SEI NAL header (type 39), payload type 144 (content light level info), payload size 4. */
const CLL_SEI_HEAD = Buffer.from([0x4e, 0x01, 0x90, 0x04]);
const CLL_SEI_NAL_BYTES = 9; // NAL header 2 + type 1 + size 1 + payload 4 + rbsp trailing 1
const RBSP_TRAILING = 0x80;
const SAMPLE_ENTRY_FIELDS = 78; // VisualSampleEntry fields before its child boxes
const STSD_PREAMBLE = 8; // version/flags + entry_count
const CONTAINERS = new Set(['moov', 'trak', 'mdia', 'minf', 'stbl']);
const HEVC_ENTRIES = new Set(['hvc1', 'hev1']);
// The AV1 binding (AV1-ISOBMFF §2.2) carries `mdcv`/`clli` in its sample entry as HEVC's does; its bitstream
// has no SEI (SVT-AV1 writes no CLL metadata OBU), so only the boxes are written for it.
const HDR_ENTRIES = new Set([...HEVC_ENTRIES, 'av01']);
const SCAN_CHUNK = 4 * 1024 * 1024;

export interface HdrMetadata {
  levels: LightLevels;
  /** ST 2086 mastering display peak, cd/m². */
  peakNits: number;
}

/**
 * The values as written: integers, at least 1 (0 means "unknown" in CTA-861.3), MaxFALL ≤ MaxCLL, and a
 * MaxCLL nudged by 1 cd/m² in the one case whose bytes would need an emulation-prevention byte.
 */
export function levelsToWrite(levels: LightLevels): LightLevels {
  let maxCll = Math.min(65535, Math.max(1, Math.round(levels.maxCll)));
  const maxFall = Math.min(maxCll, Math.max(1, Math.round(levels.maxFall)));
  // Bytes …, CLL_lo, FALL_hi, FALL_lo: 00 00 0x (x ≤ 3) would need one.
  if ((maxCll & 0xff) === 0 && maxFall <= 3) maxCll += 1;
  return { maxCll, maxFall };
}

/** Writes the levels (SEI for HEVC, and `clli`) and the mastering display (`mdcv`) into an HDR10 MP4/MOV. */
export async function writeHdrMetadata(path: string, metadata: HdrMetadata): Promise<void> {
  const levels = levelsToWrite(metadata.levels);
  const payload = Buffer.from([levels.maxCll >> 8, levels.maxCll & 0xff, levels.maxFall >> 8, levels.maxFall & 0xff]);
  const boxes = await topLevelBoxes(path);
  const moov = boxes.find((box) => box.type === 'moov');
  if (!moov) throw new Error('writeHdrMetadata: no moov box');
  const moovBytes = await readRange(path, moov.start, moov.size);
  const hevc = HEVC_ENTRIES.has(findSampleEntry(moovBytes)?.type ?? '');
  if (hevc) {
    const file = await open(path, 'r+');
    try {
      for (const box of boxes.filter((each) => each.type === 'mdat')) await patchSeiInFile(file, box, payload);
    } finally {
      await file.close();
    }
    patchSei(moovBytes, payload, 2);
  }
  const updated = setSampleEntryBoxes(moovBytes, {
    clli: payload,
    mdcv: mdcvPayload(metadata.peakNits),
  });
  const delta = updated.length - moovBytes.length;
  if (delta === 0) {
    const handle = await open(path, 'r+');
    try {
      await handle.write(updated, 0, updated.length, moov.start);
    } finally {
      await handle.close();
    }
    return;
  }
  const dataAfterMoov = boxes.some((box) => box.type === 'mdat' && box.start > moov.start);
  if (dataAfterMoov) shiftChunkOffsets(updated, delta);
  await rewriteWithMoov(path, moov, updated);
}

/**
 * Writes the levels into the CLL SEI of a CMAF media segment (moof + mdat, no moov): an HLS package's
 * HDR rung carries x265's SEI in every segment, and its init segment's boxes (writeHdrMetadata) must agree.
 */
export async function writeSegmentLightLevels(path: string, levels: LightLevels): Promise<void> {
  const written = levelsToWrite(levels);
  const payload = Buffer.from([
    written.maxCll >> 8,
    written.maxCll & 0xff,
    written.maxFall >> 8,
    written.maxFall & 0xff,
  ]);
  const boxes = await topLevelBoxes(path);
  const file = await open(path, 'r+');
  try {
    for (const box of boxes.filter((each) => each.type === 'mdat')) await patchSeiInFile(file, box, payload);
  } finally {
    await file.close();
  }
}

/** The `clli` and `mdcv` boxes of the video track, as a player reads them; null when either is absent. */
export async function readHdrMetadata(path: string): Promise<HdrMetadata | null> {
  const moov = (await topLevelBoxes(path)).find((box) => box.type === 'moov');
  if (!moov) return null;
  const entry = findSampleEntry(await readRange(path, moov.start, moov.size));
  if (!entry) return null;
  const children = childBoxes(entry.buffer, entry.childrenStart, entry.end);
  const clli = children.find((child) => child.type === 'clli' && child.end - child.payload === 4);
  const mdcv = children.find((child) => child.type === 'mdcv' && child.end - child.payload === 24);
  if (!clli || !mdcv) return null;
  return {
    levels: { maxCll: entry.buffer.readUInt16BE(clli.payload), maxFall: entry.buffer.readUInt16BE(clli.payload + 2) },
    peakNits: entry.buffer.readUInt32BE(mdcv.payload + 16) / 10000,
  };
}

// --- SEI ------------------------------------------------------------------------------------------------

/** Rewrites every CLL SEI NAL in `buffer` (NAL length prefixes of `lengthBytes`); returns how many. */
export function patchSei(buffer: Buffer, payload: Buffer, lengthBytes: 2 | 4): number {
  let count = 0;
  for (let at = buffer.indexOf(CLL_SEI_HEAD); at >= 0; at = buffer.indexOf(CLL_SEI_HEAD, at + 1)) {
    if (isCllSeiNal(buffer, at, lengthBytes)) {
      payload.copy(buffer, at + CLL_SEI_HEAD.length);
      count += 1;
    }
  }
  return count;
}

function isCllSeiNal(buffer: Buffer, at: number, lengthBytes: 2 | 4): boolean {
  if (at < lengthBytes || at + CLL_SEI_NAL_BYTES > buffer.length) return false;
  const length = lengthBytes === 4 ? buffer.readUInt32BE(at - 4) : buffer.readUInt16BE(at - 2);
  return length === CLL_SEI_NAL_BYTES && buffer[at + CLL_SEI_NAL_BYTES - 1] === RBSP_TRAILING;
}

async function patchSeiInFile(file: FileHandle, mdat: Box, payload: Buffer): Promise<void> {
  const overlap = CLL_SEI_NAL_BYTES + 4;
  const end = mdat.start + mdat.size;
  for (let start = mdat.start; start < end; start += SCAN_CHUNK) {
    const length = Math.min(SCAN_CHUNK + overlap, end - start);
    const chunk = Buffer.alloc(length);
    await file.read(chunk, 0, length, start);
    // A NAL that starts in the overlap is patched by the next chunk; only take starts inside this one.
    const limit = Math.min(SCAN_CHUNK, length);
    for (let at = chunk.indexOf(CLL_SEI_HEAD); at >= 0 && at < limit; at = chunk.indexOf(CLL_SEI_HEAD, at + 1)) {
      if (isCllSeiNal(chunk, at, 4)) await file.write(payload, 0, 4, start + at + CLL_SEI_HEAD.length);
    }
  }
}

// --- boxes ----------------------------------------------------------------------------------------------

interface Box {
  type: string;
  start: number;
  size: number;
}

async function topLevelBoxes(path: string): Promise<Box[]> {
  const size = (await stat(path)).size;
  const handle = await open(path, 'r');
  const boxes: Box[] = [];
  try {
    for (let offset = 0; offset + 8 <= size;) {
      const head = Buffer.alloc(16);
      await handle.read(head, 0, 16, offset);
      const size32 = head.readUInt32BE(0);
      const boxSize = size32 === 1 ? Number(head.readBigUInt64BE(8)) : size32 === 0 ? size - offset : size32;
      if (boxSize < 8) throw new Error(`bad box size at ${offset}`);
      boxes.push({ type: head.toString('latin1', 4, 8), start: offset, size: boxSize });
      offset += boxSize;
    }
  } finally {
    await handle.close();
  }
  return boxes;
}

async function readRange(path: string, start: number, length: number): Promise<Buffer> {
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(length);
    await handle.read(buffer, 0, length, start);
    return buffer;
  } finally {
    await handle.close();
  }
}

interface ChildBox {
  type: string;
  start: number;
  payload: number;
  end: number;
}

/** The boxes between `from` and `to` in `buffer` (32-bit sizes: the only ones inside a moov we write). */
function childBoxes(buffer: Buffer, from: number, to: number): ChildBox[] {
  const boxes: ChildBox[] = [];
  for (let offset = from; offset + 8 <= to;) {
    const size = buffer.readUInt32BE(offset);
    if (size < 8 || offset + size > to) break;
    boxes.push({
      type: buffer.toString('latin1', offset + 4, offset + 8),
      start: offset,
      payload: offset + 8,
      end: offset + size,
    });
    offset += size;
  }
  return boxes;
}

interface SampleEntry {
  /** hvc1, hev1 or av01. */
  type: string;
  buffer: Buffer;
  /** moov, trak, mdia, minf, stbl, stsd, the entry: whose sizes grow when the entry does. */
  path: ChildBox[];
  childrenStart: number;
  end: number;
}

/** The HEVC or AV1 sample entry of the first track that has one. */
function findSampleEntry(moov: Buffer): SampleEntry | null {
  const walk = (from: number, to: number, path: ChildBox[]): SampleEntry | null => {
    for (const box of childBoxes(moov, from, to)) {
      if (CONTAINERS.has(box.type)) {
        const found = walk(box.payload, box.end, [...path, box]);
        if (found) return found;
      } else if (box.type === 'stsd') {
        for (const entry of childBoxes(moov, box.payload + STSD_PREAMBLE, box.end)) {
          if (HDR_ENTRIES.has(entry.type)) {
            return {
              type: entry.type,
              buffer: moov,
              path: [...path, box, entry],
              childrenStart: entry.payload + SAMPLE_ENTRY_FIELDS,
              end: entry.end,
            };
          }
        }
      }
    }
    return null;
  };
  const root = childBoxes(moov, 0, moov.length)[0];
  return root?.type === 'moov' ? walk(root.payload, root.end, [root]) : null;
}

/** The moov with `boxes` (type → payload) set in the video sample entry: patched when present, appended when not. */
function setSampleEntryBoxes(moov: Buffer, boxes: Record<string, Buffer>): Buffer {
  const entry = findSampleEntry(moov);
  if (!entry) throw new Error('writeHdrMetadata: no HEVC or AV1 sample entry');
  const children = childBoxes(moov, entry.childrenStart, entry.end);
  const appended: Buffer[] = [];
  for (const [type, payload] of Object.entries(boxes)) {
    const existing = children.find((child) => child.type === type);
    if (existing && existing.end - existing.payload === payload.length) payload.copy(moov, existing.payload);
    else if (existing) throw new Error(`writeHdrMetadata: ${type} box of an unexpected size`);
    else appended.push(box(type, payload));
  }
  if (appended.length === 0) return moov;
  const added = Buffer.concat(appended);
  const out = Buffer.concat([moov.subarray(0, entry.end), added, moov.subarray(entry.end)]);
  for (const ancestor of entry.path) out.writeUInt32BE(out.readUInt32BE(ancestor.start) + added.length, ancestor.start);
  return out;
}

function box(type: string, payload: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(8 + payload.length, 0);
  head.write(type, 4, 'latin1');
  return Buffer.concat([head, payload]);
}

/** SMPTE ST 2086 as the `mdcv` box carries it: G, B, R and white x/y (0.00002), max and min luminance (0.0001). */
function mdcvPayload(peakNits: number): Buffer {
  const payload = Buffer.alloc(24);
  [...MASTER_DISPLAY.primaries, ...MASTER_DISPLAY.whitePoint].forEach((value, i) =>
    payload.writeUInt16BE(value, i * 2),
  );
  payload.writeUInt32BE(peakNits * 10000, 16);
  payload.writeUInt32BE(MASTER_DISPLAY.minLuminance, 20);
  return payload;
}

/** Adds `delta` to every chunk offset (stco, co64) of every track: the media moved by the bytes moov grew. */
function shiftChunkOffsets(moov: Buffer, delta: number): void {
  const walk = (from: number, to: number): void => {
    for (const child of childBoxes(moov, from, to)) {
      if (CONTAINERS.has(child.type)) walk(child.payload, child.end);
      else if (child.type === 'stco' || child.type === 'co64') {
        const count = moov.readUInt32BE(child.payload + 4);
        for (let i = 0; i < count; i++) {
          if (child.type === 'stco') {
            const at = child.payload + 8 + i * 4;
            const moved = moov.readUInt32BE(at) + delta;
            if (moved > 0xffffffff) throw new Error('writeHdrMetadata: a chunk offset would pass 4 GiB in stco');
            moov.writeUInt32BE(moved, at);
          } else {
            const at = child.payload + 8 + i * 8;
            moov.writeBigUInt64BE(moov.readBigUInt64BE(at) + BigInt(delta), at);
          }
        }
      }
    }
  };
  walk(0, moov.length);
}

/** Writes the file again with `moov` replaced, next to it, then renames it over (never a half-written output). */
async function rewriteWithMoov(path: string, moov: Box, updated: Buffer): Promise<void> {
  const partial = `${path}.metadata-partial`;
  try {
    const out = createWriteStream(partial);
    if (moov.start > 0) await pipeline(createReadStream(path, { start: 0, end: moov.start - 1 }), out, { end: false });
    await new Promise<void>((resolve, reject) => out.write(updated, (error) => (error ? reject(error) : resolve())));
    const rest = moov.start + moov.size;
    const size = (await stat(path)).size;
    if (rest < size) await pipeline(createReadStream(path, { start: rest }), out);
    else await new Promise<void>((resolve) => out.end(resolve));
    await rename(partial, path);
  } catch (error) {
    await rm(partial, { force: true });
    throw error;
  }
}
