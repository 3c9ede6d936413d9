// Media fixtures are made once per machine: a later run finds the file its recipe names and does not run
// ffmpeg again; another recipe gets another file (test/fixtures/media.ts).
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

type Media = typeof import('../fixtures/media');

/** The fixtures module as a fresh run loads it: nothing remembered in memory. */
function freshMedia(): Media {
  let media: Media | undefined;
  jest.isolateModules(() => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- a fresh copy of the module per call
    media = require('../fixtures/media') as Media;
  });
  return media!;
}

describe('media fixture cache', () => {
  const saved = process.env.MEDIA_FIXTURE_CACHE;
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'mj-fixture-cache-'));
    process.env.MEDIA_FIXTURE_CACHE = dir;
  });
  afterEach(() => {
    process.env.MEDIA_FIXTURE_CACHE = saved;
    rmSync(dir, { recursive: true, force: true });
  });

  it('reuses the file a recipe made in an earlier run, and makes another for another recipe', async () => {
    const first = await freshMedia().sdrMp4({ width: 160, height: 90, seconds: 1, fps: 10, audio: false });
    expect(dirname(first)).toBe(dir);
    expect(first).toMatch(/\/sdr-160x90-1s-10fps-[0-9a-f]{16}\.mp4$/);
    const made = statSync(first);

    const again = await freshMedia().sdrMp4({ width: 160, height: 90, seconds: 1, fps: 10, audio: false });
    expect(again).toBe(first);
    // The same file, not written again (a new one is renamed into place: another inode).
    expect(statSync(again)).toMatchObject({ ino: made.ino, size: made.size });

    const other = await freshMedia().sdrMp4({ width: 160, height: 90, seconds: 2, fps: 10, audio: false });
    expect(other).not.toBe(first);
    expect(readdirSync(dir).sort()).toEqual([first, other].map((path) => path.slice(dir.length + 1)).sort());
  });

  it('names a fixture made from another fixture after that one, so a new source makes a new result', async () => {
    const media = freshMedia();
    const truncated = await media.truncatedMp4();
    expect(statSync(truncated).size).toBe(Math.floor(statSync(await media.sdrMp4()).size / 2));
    expect(await freshMedia().truncatedMp4()).toBe(truncated);
  });

  it('removes a folder unused for two weeks (a packaged fixture, a partial one of a killed run), keeps a fresh one', async () => {
    // test/support/hls-package.ts keeps its HLS packages as folders in this cache.
    const stale = join(dir, 'hls-package-0123456789abcdef');
    const partial = join(dir, 'partial-gone-hls-package-0123456789abcdef');
    const fresh = join(dir, 'hls-package-fedcba9876543210');
    for (const folder of [stale, partial, fresh]) {
      mkdirSync(folder);
      writeFileSync(join(folder, 'master.m3u8'), '#EXTM3U\n');
    }
    const threeWeeksAgo = new Date(Date.now() - 21 * 24 * 3600 * 1000);
    for (const folder of [stale, partial]) utimesSync(folder, threeWeeksAgo, threeWeeksAgo);

    freshMedia().fixtureDir();

    expect(readdirSync(dir)).toEqual(['hls-package-fedcba9876543210']);
  });
});
