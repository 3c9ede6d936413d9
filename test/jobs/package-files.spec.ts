// The playback route serves exactly the names the packager writes: src/jobs/package-files.ts (API side) against
// src/media/hls/rendition-names.ts (worker side), which the API may not import.
import {
  AUDIO_FOLDER,
  INIT_SEGMENT,
  MASTER_PLAYLIST,
  MEDIA_PLAYLIST,
  renditionFolder,
} from '../../src/media/hls/rendition-names';
import { isPackageFilePath, packageFileKey } from '../../src/jobs/package-files';

describe('isPackageFilePath (what the playback route serves)', () => {
  it('accepts every name the packager writes', () => {
    const folders = [
      AUDIO_FOLDER,
      renditionFolder({ codec: 'hevc', height: 2160, range: 'PQ' }),
      renditionFolder({ codec: 'av1', height: 1080, range: 'HLG' }),
      renditionFolder({ codec: 'h264', height: 360, range: 'SDR' }),
    ];
    expect(isPackageFilePath(MASTER_PLAYLIST)).toBe(true);
    for (const folder of folders)
      for (const file of [MEDIA_PLAYLIST, INIT_SEGMENT, 'seg-00000.m4s', 'seg-123456.m4s'])
        expect({ path: `${folder}/${file}`, ok: isPackageFilePath(`${folder}/${file}`) }).toEqual({
          path: `${folder}/${file}`,
          ok: true,
        });
  });

  it.each([
    '../master.m3u8',
    '..',
    'h264-180-sdr/..',
    'index.m3u8',
    'h264-180-sdr/init.txt',
    'h264-180-sdr/secret.m4s',
    'h264-180-sdr/seg-1.m4s',
    'a/b/seg-00000.m4s',
    'h264-180-sdr/master.m3u8',
    'master.m3u8/',
    'h264-180-sdr\\init.mp4',
    '/etc/passwd',
  ])('refuses %j', (path) => {
    expect(isPackageFilePath(path)).toBe(false);
    expect(packageFileKey('outputs/a/b/0/', path)).toBeNull();
  });
});
