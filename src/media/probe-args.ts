// The ffprobe argv of the submit's (and the worker's) input probe: pure, no I/O. probe.ts runs it and
// classifies the result.
import { inputOptions } from './ffmpeg-input';

/** Packets read to look for CENC "Encryption info" side data (a few per stream is plenty). */
export const PROBE_PACKETS = 16;

export function buildProbeArgs(input: string, rwTimeoutUs?: number): string[] {
  return [
    '-v',
    'error',
    ...inputOptions(input, rwTimeoutUs),
    '-print_format',
    'json',
    '-show_format',
    '-show_streams',
    // The first packets carry "Encryption info" side data when a track is CENC-encrypted; this works
    // for URLs too, where the box scan of a local file is not possible.
    '-show_packets',
    '-read_intervals',
    `%+#${PROBE_PACKETS}`,
    '-show_entries',
    'packet=stream_index:packet_side_data=side_data_type',
    input,
  ];
}
