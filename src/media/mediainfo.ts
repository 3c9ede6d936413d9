// Asks mediainfo what it thinks of a file's HDR signalling: the independent check (besides ffprobe) that
// an sdr2hdr output is HDR10 the way players and platforms see it ("SMPTE ST 2086, HDR10 compatible").
import { runMediaProcess } from './run-ffmpeg';

export interface MediainfoVideoHdr {
  isHdr10: boolean;
  /** e.g. "SMPTE ST 2086" */
  hdrFormat: string | null;
  /** e.g. "HDR10" */
  hdrCompatibility: string | null;
  /** e.g. "PQ" */
  transfer: string | null;
  colourPrimaries: string | null;
  masteringLuminance: string | null;
  maxCll: string | null;
  maxFall: string | null;
  encrypted: boolean;
}

interface MediainfoJson {
  media?: { track?: Array<Record<string, unknown>> };
}

/** Null when the file has no video track (or mediainfo cannot read it). */
export async function readMediainfoHdr(
  path: string,
  options: { mediainfoPath?: string; timeoutMs?: number } = {},
): Promise<MediainfoVideoHdr | null> {
  const chunks: Buffer[] = [];
  const run = await runMediaProcess(
    options.mediainfoPath ?? (process.env.MEDIAINFO_PATH || 'mediainfo'),
    ['--Output=JSON', path],
    {
      timeLimitMs: options.timeoutMs ?? 15_000,
      onStdout: (chunk) => chunks.push(chunk),
    },
  );
  if (run.status !== 'succeeded') return null;
  const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as MediainfoJson;
  const video = parsed.media?.track?.find((track) => track['@type'] === 'Video');
  return video ? describeHdr(video) : null;
}

export function describeHdr(track: Record<string, unknown>): MediainfoVideoHdr {
  const text = (key: string): string | null => (typeof track[key] === 'string' ? (track[key] as string) : null);
  const hdrFormat = text('HDR_Format');
  const hdrCompatibility = text('HDR_Format_Compatibility');
  const transfer = text('transfer_characteristics');
  const formats = `${hdrFormat ?? ''} ${hdrCompatibility ?? ''}`;
  return {
    isHdr10: transfer === 'PQ' && (formats.includes('HDR10') || formats.includes('SMPTE ST 2086')),
    hdrFormat,
    hdrCompatibility,
    transfer,
    colourPrimaries: text('colour_primaries'),
    masteringLuminance: text('MasteringDisplay_Luminance'),
    maxCll: text('MaxCLL'),
    maxFall: text('MaxFALL'),
    encrypted: text('Encryption') === 'Encrypted',
  };
}
