// A rendition's CODECS string (RFC 6381, as HLS's EXT-X-STREAM-INF wants it) read from its own init
// segment: the decoder configuration record the encoder wrote (hvcC, avcC, av1C), so the master playlist
// names exactly the profile, tier and level of the stream a player will be given.
import { readFile } from 'node:fs/promises';

const CONTAINERS = new Set(['moov', 'trak', 'mdia', 'minf', 'stbl']);
const STSD_PREAMBLE = 8; // version/flags + entry_count
const VISUAL_SAMPLE_ENTRY_FIELDS = 78;
const AUDIO_SAMPLE_ENTRY_FIELDS = 28;
/** AAC-LC in MP4 (object type 0x40, audio object type 2): the only audio a package carries. */
export const AAC_LC_CODECS = 'mp4a.40.2';

interface Box {
  type: string;
  payload: number;
  end: number;
}

function boxes(buffer: Buffer, from: number, to: number): Box[] {
  const found: Box[] = [];
  for (let at = from; at + 8 <= to;) {
    const size = buffer.readUInt32BE(at);
    if (size < 8 || at + size > to) break;
    found.push({ type: buffer.toString('latin1', at + 4, at + 8), payload: at + 8, end: at + size });
    at += size;
  }
  return found;
}

/** The first sample entry of the init segment's first track (moov → … → stsd). */
function firstSampleEntry(buffer: Buffer): Box | null {
  const walk = (from: number, to: number): Box | null => {
    for (const box of boxes(buffer, from, to)) {
      if (CONTAINERS.has(box.type)) {
        const found = walk(box.payload, box.end);
        if (found) return found;
      } else if (box.type === 'stsd') {
        return boxes(buffer, box.payload + STSD_PREAMBLE, box.end)[0] ?? null;
      }
    }
    return null;
  };
  return walk(0, buffer.length);
}

/** The CODECS string of the stream an init segment describes; throws for a codec a package never holds. */
export async function codecsOfInitSegment(path: string): Promise<string> {
  return codecsOfInit(await readFile(path));
}

export function codecsOfInit(buffer: Buffer): string {
  const entry = firstSampleEntry(buffer);
  if (!entry) throw new Error('codecsOfInit: no sample entry');
  if (entry.type === 'mp4a') {
    const children = boxes(buffer, entry.payload + AUDIO_SAMPLE_ENTRY_FIELDS, entry.end);
    if (!children.some((child) => child.type === 'esds')) throw new Error('codecsOfInit: mp4a without esds');
    return AAC_LC_CODECS;
  }
  const children = boxes(buffer, entry.payload + VISUAL_SAMPLE_ENTRY_FIELDS, entry.end);
  const config = (type: string) => {
    const box = children.find((child) => child.type === type);
    if (!box) throw new Error(`codecsOfInit: ${entry.type} without ${type}`);
    return buffer.subarray(box.payload, box.end);
  };
  switch (entry.type) {
    case 'hvc1':
    case 'hev1':
      return hevcCodecs(entry.type, config('hvcC'));
    case 'avc1':
    case 'avc3':
      return avcCodecs(entry.type, config('avcC'));
    case 'av01': {
      const colr = children.find((child) => child.type === 'colr');
      return av1Codecs(config('av1C'), colr ? buffer.subarray(colr.payload, colr.end) : undefined);
    }
    default:
      throw new Error(`codecsOfInit: unexpected sample entry ${entry.type}`);
  }
}

/**
 * ISO/IEC 14496-15 Annex E: `hvc1.<space><profile>.<compatibility, bits reversed, hex>.<tier><level>.<constraint
 * bytes, hex, trailing zero bytes left out>`, e.g. Main10 at level 4 `hvc1.2.4.L120.B0`.
 */
export function hevcCodecs(sampleEntry: string, hvcC: Buffer): string {
  const space = hvcC[1] >> 6;
  const tier = (hvcC[1] >> 5) & 1;
  const profile = hvcC[1] & 0x1f;
  const compatibility = reverseBits32(hvcC.readUInt32BE(2));
  const constraints = [...hvcC.subarray(6, 12)];
  while (constraints.length > 0 && constraints[constraints.length - 1] === 0) constraints.pop();
  const level = hvcC[12];
  return [
    sampleEntry,
    `${['', 'A', 'B', 'C'][space]}${profile}`,
    compatibility.toString(16).toUpperCase(),
    `${tier ? 'H' : 'L'}${level}`,
    ...constraints.map((byte) => byte.toString(16).toUpperCase()),
  ].join('.');
}

/** RFC 6381: `avc1.PPCCLL` (profile_idc, constraint flags, level_idc) from the avcC record, e.g. `avc1.640028`. */
export function avcCodecs(sampleEntry: string, avcC: Buffer): string {
  const hex = (byte: number) => byte.toString(16).toUpperCase().padStart(2, '0');
  return `${sampleEntry}.${hex(avcC[1])}${hex(avcC[2])}${hex(avcC[3])}`;
}

/**
 * AV1 codec ISO media file format binding: `av01.<profile>.<level><tier>.<bit depth>`, e.g. `av01.0.08M.10`,
 * then, from the sample entry's `colr` (nclx) box, `.<mono>.<subsampling x y, sample position>.<primaries>.
 * <transfer>.<matrix>.<full range>`. Without those fields the binding says BT.709 (1.1.1), so an HDR rung
 * must name its own: `av01.0.08M.10.0.110.09.16.09.0` is a PQ one.
 */
export function av1Codecs(av1C: Buffer, colr?: Buffer): string {
  const profile = av1C[1] >> 5;
  const level = av1C[1] & 0x1f;
  const tier = av1C[2] >> 7;
  const highBitDepth = (av1C[2] >> 6) & 1;
  const twelveBit = (av1C[2] >> 5) & 1;
  const depth = highBitDepth ? (twelveBit ? 12 : 10) : 8;
  const base = `av01.${profile}.${String(level).padStart(2, '0')}${tier ? 'H' : 'M'}.${String(depth).padStart(2, '0')}`;
  if (!colr || colr.toString('latin1', 0, 4) !== 'nclx' || colr.length < 11) return base;
  const mono = (av1C[2] >> 4) & 1;
  const chroma = `${(av1C[2] >> 3) & 1}${(av1C[2] >> 2) & 1}${av1C[2] & 3}`;
  const two = (value: number) => String(value).padStart(2, '0');
  const colour = [colr.readUInt16BE(4), colr.readUInt16BE(6), colr.readUInt16BE(8)].map(two).join('.');
  return `${base}.${mono}.${chroma}.${colour}.${colr[10] >> 7}`;
}

function reverseBits32(value: number): number {
  let out = 0;
  for (let bit = 0; bit < 32; bit++) out = (out << 1) | ((value >>> bit) & 1);
  return out >>> 0;
}
