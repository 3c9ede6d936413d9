// Reads the box structure of an MP4/MOV/M4A file (ISO BMFF) to find encryption without decoding:
// encrypted tracks declare protected sample entries (`encv`/`enca`, carrying `sinf`/`schm`/`tenc`),
// and DRM systems add `pssh` boxes. Decoding such a file "works" and yields garbage, so this is the signal.
import { open, type FileHandle } from 'node:fs/promises';

/** Sample-entry types that mean "the samples are protected" (CENC schemes, plus Apple's old FairPlay ones). */
const PROTECTED_SAMPLE_ENTRIES = new Set(['encv', 'enca', 'enct', 'encs', 'encm', 'encf', 'drms', 'drmi']);
// Boxes whose payload is only child boxes, on the path moov → trak → mdia → minf → stbl → stsd.
const CONTAINER_BOXES = new Set(['moov', 'trak', 'mdia', 'minf', 'stbl', 'mvex']);
const HEADER_BYTES = 8;
const STSD_PREAMBLE_BYTES = 8; // version/flags + entry_count
// A moov is metadata; hundreds of MiB would be a hostile file, not a real index.
const DEFAULT_MAX_MOOV_BYTES = 64 * 1024 * 1024;
const MAX_TOP_LEVEL_BOXES = 10_000;

export interface IsoBmffScan {
  majorBrand: string | null;
  /** Box or sample-entry types that show encryption, e.g. ['encv', 'enca', 'pssh']; empty when clear. */
  encryptionSignals: string[];
}

interface BoxHeader {
  type: string;
  /** Offset of the payload from the start of the buffer/file. */
  payloadStart: number;
  /** Payload length; Infinity for "extends to end of file". */
  payloadSize: number;
}

/**
 * Scans a local file's top-level boxes (skipping `mdat` without reading it) and the `moov` tree.
 * Returns null when the file is not ISO BMFF (no plausible first box), e.g. a WAV.
 */
export async function scanIsoBmff(path: string, maxMoovBytes = DEFAULT_MAX_MOOV_BYTES): Promise<IsoBmffScan | null> {
  const file = await open(path, 'r');
  try {
    return await scanFile(file, (await file.stat()).size, maxMoovBytes);
  } finally {
    await file.close();
  }
}

async function scanFile(file: FileHandle, fileSize: number, maxMoovBytes: number): Promise<IsoBmffScan | null> {
  let offset = 0;
  let majorBrand: string | null = null;
  const signals = new Set<string>();
  for (let count = 0; offset + HEADER_BYTES <= fileSize && count < MAX_TOP_LEVEL_BOXES; count++) {
    const head = await readAt(file, offset, 16);
    const header = parseHeader(head, 0, fileSize - offset);
    if (!header) return count === 0 ? null : { majorBrand, encryptionSignals: [...signals] };
    if (count === 0 && !isFourCc(header.type)) return null;
    const payloadSize = Math.min(header.payloadSize, fileSize - offset - header.payloadStart);
    if (header.type === 'ftyp' && payloadSize >= 4)
      majorBrand = (await readAt(file, offset + header.payloadStart, 4)).toString('latin1');
    if (header.type === 'pssh') signals.add('pssh');
    if (header.type === 'moov' && payloadSize <= maxMoovBytes) {
      walkChildren(await readAt(file, offset + header.payloadStart, payloadSize), signals);
    }
    offset += header.payloadStart + payloadSize;
  }
  return { majorBrand, encryptionSignals: [...signals] };
}

/** Walks a buffer of sibling boxes, descending into containers and reading stsd sample-entry types. */
function walkChildren(buffer: Buffer, signals: Set<string>): void {
  let offset = 0;
  while (offset + HEADER_BYTES <= buffer.length) {
    const header = parseHeader(buffer, offset, buffer.length - offset);
    if (!header) return;
    const start = offset + header.payloadStart;
    const end = Math.min(buffer.length, start + header.payloadSize);
    const payload = buffer.subarray(start, end);
    if (header.type === 'pssh') signals.add('pssh');
    if (CONTAINER_BOXES.has(header.type)) walkChildren(payload, signals);
    if (header.type === 'stsd') readSampleEntries(payload.subarray(STSD_PREAMBLE_BYTES), signals);
    offset = end;
  }
}

function readSampleEntries(buffer: Buffer, signals: Set<string>): void {
  let offset = 0;
  while (offset + HEADER_BYTES <= buffer.length) {
    const header = parseHeader(buffer, offset, buffer.length - offset);
    if (!header) return;
    if (PROTECTED_SAMPLE_ENTRIES.has(header.type)) signals.add(header.type);
    offset = Math.min(buffer.length, offset + header.payloadStart + header.payloadSize);
  }
}

function parseHeader(buffer: Buffer, offset: number, available: number): BoxHeader | null {
  if (buffer.length - offset < HEADER_BYTES) return null;
  const size32 = buffer.readUInt32BE(offset);
  const type = buffer.toString('latin1', offset + 4, offset + 8);
  if (size32 === 0) return { type, payloadStart: HEADER_BYTES, payloadSize: available - HEADER_BYTES };
  if (size32 === 1) {
    if (buffer.length - offset < 16) return null;
    const size64 = Number(buffer.readBigUInt64BE(offset + 8));
    return size64 < 16 ? null : { type, payloadStart: 16, payloadSize: size64 - 16 };
  }
  return size32 < HEADER_BYTES ? null : { type, payloadStart: HEADER_BYTES, payloadSize: size32 - HEADER_BYTES };
}

function isFourCc(type: string): boolean {
  return /^[\x20-\x7e]{4}$/.test(type);
}

async function readAt(file: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  const { bytesRead } = await file.read(buffer, 0, length, position);
  return buffer.subarray(0, bytesRead);
}
