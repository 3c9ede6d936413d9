// Where a source's packets really end, read from the packets rather than the headers (issue 29 item 1).
// An MP4/MOV/M4A says how long it is in mvhd/tkhd/mdhd, but a decoder plays every sample the sample
// tables list, whatever those headers claim: a 30 s file whose headers say 1 s decodes 30 s. The
// packets' own timestamps (the sample tables, after the edit list) are what ffmpeg will encode.
//
// Cheap by construction: ffprobe seeks to the end through the index (`-read_intervals <far>%`) and
// lists only the packets from the last keyframe on — demuxing, no decoding — so an hour of video costs
// one keyframe interval of packets, not an hour of frames. Streamed line by line and reduced to one
// number per stream, so a file with few keyframes cannot grow our memory.
import { defaultFfprobePath, runMediaProcess } from './run-ffmpeg';
import { inputOptions } from './ffmpeg-input';

/** Far past any accepted source: ffprobe seeks to the last keyframe before it. */
const SEEK_TO_END_SECONDS = 100_000_000;

export interface PacketEndOptions {
  ffprobePath?: string;
  timeoutMs: number;
  rwTimeoutUs?: number;
  signal?: AbortSignal;
}

/** Per stream index: the end of its last packet (pts or dts + duration, seconds) and that packet's duration. */
export type PacketEnds = Map<number, { endSeconds: number; lastPacketSeconds: number }>;

/** The packet ends per stream, or null when ffprobe could not tell (it failed, timed out or read no packet). */
export async function measurePacketEnds(input: string, options: PacketEndOptions): Promise<PacketEnds | null> {
  const ends: PacketEnds = new Map();
  let pending = '';
  const take = (line: string): void => {
    const fields = Object.fromEntries(line.split('|').map((pair) => pair.split('=', 2) as [string, string]));
    const index = Number(fields.stream_index);
    const at = Math.max(seconds(fields.pts_time) ?? -Infinity, seconds(fields.dts_time) ?? -Infinity);
    if (!Number.isInteger(index) || !Number.isFinite(at)) return;
    const duration = seconds(fields.duration_time) ?? 0;
    const seen = ends.get(index);
    if (!seen || at + duration > seen.endSeconds)
      ends.set(index, { endSeconds: at + duration, lastPacketSeconds: duration });
  };
  const run = await runMediaProcess(
    options.ffprobePath ?? defaultFfprobePath(),
    [
      '-v',
      'error',
      ...inputOptions(input, options.rwTimeoutUs),
      '-read_intervals',
      `${SEEK_TO_END_SECONDS}%`,
      '-show_entries',
      'packet=stream_index,pts_time,dts_time,duration_time',
      '-of',
      'compact=p=0',
      input,
    ],
    {
      signal: options.signal,
      timeLimitMs: options.timeoutMs,
      onStdout: (chunk) => {
        const lines = (pending + chunk.toString('latin1')).split('\n');
        pending = lines.pop() ?? '';
        lines.forEach(take);
      },
    },
  );
  if (pending) take(pending);
  if (run.status === 'aborted') throw new Error('probe aborted');
  return run.status === 'succeeded' && ends.size > 0 ? ends : null;
}

function seconds(value: string | undefined): number | null {
  const number = Number(value);
  return value === undefined || value === 'N/A' || !Number.isFinite(number) ? null : number;
}
