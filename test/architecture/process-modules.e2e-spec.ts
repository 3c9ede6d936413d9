// The API process never loads the worker's code: nothing of src/processing/, none of the media
// pipelines that run ffmpeg encodes and none of their argv builders (it runs only the short ffprobe of a
// source at submit, and prices with the output geometry alone). Checked on
// the built modules, transitively: what requiring the API's composition actually loads.
import { spawnSync } from 'node:child_process';
import { ensureBuilt, ROOT } from '../support/dist-build';

/** The files under dist/src/ that requiring `entry` loads, relative to dist/src/. */
function loadedBy(entry: string): string[] {
  const file = ensureBuilt(entry);
  const script = `
    require(${JSON.stringify(file)});
    const prefix = ${JSON.stringify(`${ROOT}/dist/src/`)};
    console.log(JSON.stringify(Object.keys(require.cache).filter((f) => f.startsWith(prefix)).map((f) => f.slice(prefix.length))));
  `;
  const result = spawnSync(process.execPath, ['-e', script], { cwd: ROOT, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(result.stderr);
  return JSON.parse(result.stdout) as string[];
}

const WORKER_ONLY =
  /^(processing\/|media\/(pipelines|hdr-pipeline|loudness-pipeline|pipeline-outcome|loudness-reports|vad|mediainfo|cpu-set|hdr-args|loudness-args|segments|light-levels)\.js$)/;

describe('which code each process loads', () => {
  it('the API loads no processing, no media pipeline and no encode argv', () => {
    const api = loadedBy('dist/src/http-app.js');
    expect(api).toContain('jobs/jobs.module.js');
    expect(api.filter((file) => WORKER_ONLY.test(file))).toEqual([]);
  });

  it('the worker loads them (so the check above can see them)', () => {
    const worker = loadedBy('dist/src/worker.module.js');
    expect(worker).toContain('processing/processing.module.js');
    expect(worker).toContain('media/pipelines.js');
    expect(worker).toContain('media/hdr-args.js');
  });
});
