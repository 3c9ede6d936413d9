// The master playlist, written by us rather than ffmpeg (whose master knows neither VIDEO-RANGE nor what
// the segments measured): one EXT-X-STREAM-INF per rung with its measured bandwidths and its CODECS read
// from the init segment, and the one AAC audio group every rung refers to. RFC 8216 §4.3.4, with Apple's
// HLS authoring specification's rules for HDR (VIDEO-RANGE) and for independent segments.
import type { VideoRange } from '../output-spec';
import { AUDIO_FOLDER, MEDIA_PLAYLIST } from './rendition-names';

export const AUDIO_GROUP = 'aac';

export interface MasterVariant {
  /** The rendition's folder (its media playlist is `<folder>/playlist.m3u8`). */
  folder: string;
  /** Peak segment bit rate (bit/s), audio included (RFC 8216: every rendition a player fetches with it). */
  bandwidth: number;
  averageBandwidth: number;
  /** The video's CODECS string (the audio's is added when there is audio). */
  codecs: string;
  width: number;
  height: number;
  frameRate: number;
  videoRange: VideoRange;
}

export interface MasterAudio {
  codecs: string;
  channels: number;
}

export function buildMasterPlaylist(variants: MasterVariant[], audio: MasterAudio | null): string {
  const lines = ['#EXTM3U', '#EXT-X-VERSION:7', '#EXT-X-INDEPENDENT-SEGMENTS'];
  if (audio) {
    lines.push(
      `#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="${AUDIO_GROUP}",NAME="Audio",DEFAULT=YES,AUTOSELECT=YES,` +
        `CHANNELS="${audio.channels}",URI="${AUDIO_FOLDER}/${MEDIA_PLAYLIST}"`,
    );
  }
  for (const variant of variants) {
    const codecs = audio ? `${variant.codecs},${audio.codecs}` : variant.codecs;
    const attributes = [
      `BANDWIDTH=${variant.bandwidth}`,
      `AVERAGE-BANDWIDTH=${variant.averageBandwidth}`,
      `CODECS="${codecs}"`,
      `RESOLUTION=${variant.width}x${variant.height}`,
      `FRAME-RATE=${variant.frameRate.toFixed(3)}`,
      `VIDEO-RANGE=${variant.videoRange}`,
      ...(audio ? [`AUDIO="${AUDIO_GROUP}"`] : []),
    ];
    lines.push(`#EXT-X-STREAM-INF:${attributes.join(',')}`, `${variant.folder}/${MEDIA_PLAYLIST}`);
  }
  return `${lines.join('\n')}\n`;
}
