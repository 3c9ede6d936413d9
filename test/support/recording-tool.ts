// A media tool that records how it was called: a shell wrapper, named in FFMPEG_PATH or FFPROBE_PATH of the
// worker under test, writes its argv (NUL-separated) to a new file in `<dir>/calls` and then runs the real
// tool. The tests read what the worker really ran from those files.
import { chmod, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface ToolCall {
  tool: string;
  argv: string[];
}

/** Writes the wrapper `dir/name` around `real` and returns its path. */
export async function recordingTool(dir: string, name: string, real: string): Promise<string> {
  await mkdir(join(dir, 'calls'), { recursive: true });
  const path = join(dir, name);
  const script = `#!/bin/sh\nprintf '%s\\0' "$@" > "$(mktemp '${dir}/calls/${name}.XXXXXXXX')"\nexec '${real}' "$@"\n`;
  await writeFile(path, script);
  await chmod(path, 0o755);
  return path;
}

/** Every call the wrappers in `dir` recorded so far. */
export async function recordedCalls(dir: string): Promise<ToolCall[]> {
  const names = await readdir(join(dir, 'calls'));
  return Promise.all(
    names.map(async (name) => {
      const argv = (await readFile(join(dir, 'calls', name), 'utf8')).split('\0');
      argv.pop();
      return { tool: name.split('.')[0], argv };
    }),
  );
}

/** Forgets the calls recorded so far (the next recordedCalls sees only later ones). */
export async function forgetCalls(dir: string): Promise<void> {
  await rm(join(dir, 'calls'), { recursive: true, force: true });
  await mkdir(join(dir, 'calls'), { recursive: true });
}

/** The value after `option` in an argv (its last occurrence), or undefined. */
export function optionValue(argv: string[], option: string): string | undefined {
  const at = argv.lastIndexOf(option);
  return at < 0 ? undefined : argv[at + 1];
}
