// `npm ci` on the oldest Node the project supports prints no EBADENGINE: every locked package accepts
// the floor of package.json's `engines.node` (issue 12 item 21).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { minVersion, satisfies } from 'semver';

interface LockEntry {
  engines?: { node?: string } | string[];
}

const root = join(__dirname, '..', '..');
const readJson = <T>(file: string): T => JSON.parse(readFileSync(join(root, file), 'utf8')) as T;

describe('engines', () => {
  it('every package in package-lock.json runs on the lowest Node that engines.node allows', () => {
    const floor = minVersion(readJson<{ engines: { node: string } }>('package.json').engines.node)!.version;
    const lock = readJson<{ packages: Record<string, LockEntry> }>('package-lock.json');
    const refused = Object.entries(lock.packages)
      .filter(([, entry]) => entry.engines && !Array.isArray(entry.engines) && entry.engines.node)
      .filter(([, entry]) => !satisfies(floor, (entry.engines as { node: string }).node))
      .map(([name, entry]) => `${name} wants node ${(entry.engines as { node: string }).node}`);
    expect({ floor, refused }).toEqual({ floor: '20.19.0', refused: [] });
  });
});
