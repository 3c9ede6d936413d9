// Where each file of a package lives under its prefix (the layout docs/media.md, "HLS packages", describes): master.m3u8 at the
// top, one folder per rendition holding playlist.m3u8, init.mp4 and seg-00000.m4s…, the audio in audio/.
// Every URI a playlist holds is relative to it, so a package reads the same from any prefix or token.
import type { RungSpec } from '../output-spec';

export const MASTER_PLAYLIST = 'master.m3u8';
export const MEDIA_PLAYLIST = 'playlist.m3u8';
export const INIT_SEGMENT = 'init.mp4';
/** ffmpeg's segment name pattern; seg-00000.m4s is the first. */
export const SEGMENT_PATTERN = 'seg-%05d.m4s';
export const AUDIO_FOLDER = 'audio';

/** A rung's folder: `<codec>-<height>-<range lowercased>`, e.g. `hevc-1080-pq`, `h264-720-sdr`. */
export function renditionFolder(rung: Pick<RungSpec, 'codec' | 'height' | 'range'>): string {
  return `${rung.codec}-${rung.height}-${rung.range.toLowerCase()}`;
}
