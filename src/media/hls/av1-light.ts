// An AV1 PQ rung's measured light levels, written where AV1 carries them: the HDR_CLL metadata OBU that
// SVT-AV1 puts before every keyframe (AV1 spec §5.8.2, §6.7.3). The encoder needs the levels before the
// picture exists, so the rung is encoded with the mastering peak as a bound (ladder-args.ts) and, once its
// own picture is measured, every such OBU of every segment is rewritten in place: the payload is two fixed
// 16-bit fields, so nothing moves and no segment is remuxed (as hdr-metadata.ts does for HEVC's SEI).
import { open, readFile } from 'node:fs/promises';
import type { LightLevels } from '../light-levels';

const OBU_METADATA = 5;
const METADATA_TYPE_HDR_CLL = 1;
const CLL_BYTES = 4;

/** Rewrites the CLL metadata OBUs of one CMAF segment (moof + mdat); answers how many were rewritten. */
export async function writeAv1SegmentLightLevels(path: string, levels: LightLevels): Promise<number> {
  const buffer = await readFile(path);
  const payload = Buffer.from([levels.maxCll >> 8, levels.maxCll & 0xff, levels.maxFall >> 8, levels.maxFall & 0xff]);
  const offsets: number[] = [];
  for (const mdat of topLevelBoxes(buffer).filter((box) => box.type === 'mdat'))
    offsets.push(...cllOffsets(buffer, mdat.payload, mdat.end));
  if (offsets.length === 0) return 0;
  const file = await open(path, 'r+');
  try {
    for (const at of offsets) await file.write(payload, 0, CLL_BYTES, at);
  } finally {
    await file.close();
  }
  return offsets.length;
}

/**
 * Where each HDR_CLL payload starts in a run of OBUs (an mdat's samples back to back). AV1 in ISO-BMFF
 * gives every OBU its size field, so the run is walked OBU by OBU, never searched for a byte pattern.
 */
export function cllOffsets(buffer: Buffer, from: number, to: number): number[] {
  const found: number[] = [];
  for (let at = from; at < to;) {
    const header = buffer[at];
    const type = (header >> 3) & 0x0f;
    const extension = (header >> 2) & 1;
    if (!((header >> 1) & 1)) throw new Error(`AV1 OBU at ${at} has no size field`);
    const size = leb128(buffer, at + 1 + extension);
    const start = size.next;
    if (type === OBU_METADATA) {
      const kind = leb128(buffer, start);
      if (kind.value === METADATA_TYPE_HDR_CLL && start + size.value >= kind.next + CLL_BYTES) found.push(kind.next);
    }
    at = start + size.value;
    if (at > to) throw new Error(`AV1 OBU at ${start} runs past its box`);
  }
  return found;
}

function leb128(buffer: Buffer, at: number): { value: number; next: number } {
  let value = 0;
  for (let i = 0; i < 8; i++) {
    const byte = buffer[at + i];
    if (byte === undefined) throw new Error('AV1 leb128 runs past the buffer');
    value += (byte & 0x7f) * 2 ** (7 * i);
    if (!(byte & 0x80)) return { value, next: at + i + 1 };
  }
  throw new Error('AV1 leb128 longer than 8 bytes');
}

function topLevelBoxes(buffer: Buffer): { type: string; payload: number; end: number }[] {
  const found: { type: string; payload: number; end: number }[] = [];
  for (let at = 0; at + 8 <= buffer.length;) {
    let size = buffer.readUInt32BE(at);
    let header = 8;
    if (size === 1) {
      size = Number(buffer.readBigUInt64BE(at + 8));
      header = 16;
    } else if (size === 0) size = buffer.length - at;
    if (size < header || at + size > buffer.length) break;
    found.push({ type: buffer.toString('latin1', at + 4, at + 8), payload: at + header, end: at + size });
    at += size;
  }
  return found;
}
