// A rung's init segment and media segments joined into the one MP4 the checks and the light pass read
// (src/media/hls/concat-files.ts), as the worker's process does it: in a process of its own, so what Node
// prints to stderr (a MaxListenersExceededWarning, which Jest's sandbox cannot see) is part of the answer.
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureBuilt } from '../support/dist-build';

const JOIN = `require(process.argv[1]).concatFiles(JSON.parse(process.argv[2]), process.argv[3]).then(
  () => process.exit(0),
  (error) => (console.error(error), process.exit(1)),
);`;

describe('concatFiles (joining a rung for its checks)', () => {
  let dir: string;
  let module: string;
  beforeAll(() => {
    module = ensureBuilt('dist/src/media/hls/concat-files.js');
  }, 180_000);
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mj-concat-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('joins an init segment and 40 segments byte for byte, in order, over an older join, warning about nothing', async () => {
    // Parts of different sizes, most larger than a read stream's 64 KiB chunk.
    const parts = await Promise.all(
      Array.from({ length: 41 }, async (_, i) => {
        const path = join(dir, i === 0 ? 'init.mp4' : `seg-${String(i).padStart(5, '0')}.m4s`);
        await writeFile(path, Buffer.alloc(1000 + i * 4000, i));
        return path;
      }),
    );
    const output = join(dir, 'joined.mp4');
    await writeFile(output, Buffer.alloc(1_000_000, 255));
    const run = spawnSync(process.execPath, ['-e', JOIN, module, JSON.stringify(parts), output], { encoding: 'utf8' });
    expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: '' });
    const expected = Buffer.concat(await Promise.all(parts.map((part) => readFile(part))));
    expect((await readFile(output)).equals(expected)).toBe(true);
  });
});
