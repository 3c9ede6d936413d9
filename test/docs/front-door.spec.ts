// The README is a front door and the repository documents itself: the README stays short, every
// relative link in the documentation lands on a file (and heading) that exists, every page under docs/
// is reachable from the README, and no file points outside the repository (a clone has no ../shared).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, normalize, relative, resolve } from 'node:path';
import { ROUND_TRIP_SSIM_FLOORS } from '../../src/media/output-checks';

const ROOT = resolve(__dirname, '../..');
const tracked = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
  cwd: ROOT,
  encoding: 'utf8',
})
  .split('\0')
  .filter((file) => file !== '' && existsSync(join(ROOT, file)));
const trackedSet = new Set(tracked);
const trackedBasenames = new Set(tracked.map((file) => basename(file)));

/** The documentation pages: the README, docs/**.md and the workspaces' READMEs. */
const DOC_PAGES = tracked.filter((file) => file.endsWith('.md'));

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens; repeats get -1, -2, … */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of withoutCodeBlocks(markdown).split('\n')) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const slug = heading[1]
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

function withoutCodeBlocks(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, '');
}

/** Relative link targets of a page's inline links `[text](target)`, outside code blocks and spans. */
function relativeLinks(markdown: string): string[] {
  const prose = withoutCodeBlocks(markdown).replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)]
    .map((match) => match[1])
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

function brokenLinks(page: string): string[] {
  const text = readFileSync(join(ROOT, page), 'utf8');
  const broken: string[] = [];
  for (const target of relativeLinks(text)) {
    const [path, anchor] = target.split('#', 2);
    const file = path === '' ? page : normalize(join(dirname(page), decodeURIComponent(path)));
    if (file.startsWith('..') || !existsSync(join(ROOT, file))) {
      broken.push(`${target} (no file ${file})`);
      continue;
    }
    if (
      anchor !== undefined &&
      file.endsWith('.md') &&
      !anchorsOf(readFileSync(join(ROOT, file), 'utf8')).has(anchor)
    ) {
      broken.push(`${target} (no heading #${anchor} in ${file})`);
    }
  }
  return broken;
}

/**
 * Mentions in a file of something outside the repository: ../shared, this workplace's own folders
 * (/work/shared, /work/main, …; a spec's made-up /work/item path is not one), or a .md file it does not hold.
 */
function outsideReferences(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const found: string[] = [];
  for (const match of text.matchAll(/\.\.\/shared\b|\/work\/(?:shared|main|wt|\.library|\.mirror)\b[\w./-]*/g))
    found.push(match[0]);
  for (const match of text.matchAll(/(?<![\w/.-])((?:\.{1,2}\/)*[\w./-]*?[\w-]+\.md)\b/g)) {
    const name = match[1];
    const candidates = [normalize(join(dirname(file), name)), normalize(name)];
    const inside = candidates.some((candidate) => !candidate.startsWith('..') && trackedSet.has(candidate));
    if (!inside && !(name === basename(name) && trackedBasenames.has(name))) found.push(name);
  }
  return found;
}

// Files another helper is rewriting right now (the worker's use cases); each must still hold exactly
// these references, so this list fails the moment it is out of date and is emptied, not extended.
const PENDING_ELSEWHERE: Record<string, string[]> = {};

describe('the README is a front door and the repository documents itself', () => {
  it('keeps README.md to at most 200 lines', () => {
    const lines = readFileSync(join(ROOT, 'README.md'), 'utf8').trimEnd().split('\n').length;
    expect(lines).toBeLessThanOrEqual(200);
  });

  it('lists the prerequisites before the quick start and the two commands', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const prerequisites = readme.indexOf('## Prerequisites');
    expect(prerequisites).toBeGreaterThan(0);
    expect(prerequisites).toBeLessThan(readme.indexOf('## Quick start'));
    expect(prerequisites).toBeLessThan(readme.indexOf('## Run it, test it'));
    expect(readme).toContain('npm ci && npm run dev');
    expect(readme).toContain('npm ci && npm test');
  });

  it('gives an apt line that works as root on a machine without sudo, and with sudo elsewhere', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const line = /^ *(.*apt-get install .*)$/m.exec(readme)?.[1];
    expect(line).toBeDefined();
    // Stand-ins that only say how they were called: no package is installed.
    const bin = mkdtempSync(join(tmpdir(), 'mj-apt-'));
    writeFileSync(join(bin, 'apt-get'), '#!/bin/sh\necho "apt-get $1"\n', { mode: 0o755 });
    const run = (path: string) =>
      execFileSync('/bin/sh', ['-c', line!], { env: { PATH: path }, encoding: 'utf8' }).trim();
    expect(run(bin)).toBe('apt-get install');
    writeFileSync(join(bin, 'sudo'), '#!/bin/sh\necho "sudo $1 $2"\n', { mode: 0o755 });
    expect(run(bin)).toBe('sudo apt-get install');
  });

  it('says why Swagger UI shows OAS 3.0, and quotes the round_trip_ssim floors the service applies', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    expect(readme).toMatch(/badge says OAS 3\.0: the page draws a\s+3\.0\.3 rendition/);
    const guide = readFileSync(join(ROOT, 'docs/api-guide.md'), 'utf8');
    const floors = Object.entries(ROUND_TRIP_SSIM_FLOORS).map(([quality, floor]) => `\`≥ ${floor}\` (${quality})`);
    for (const floor of floors) expect(guide).toContain(floor);
  });

  it('resolves every relative link of the documentation, anchors included', () => {
    const broken = Object.fromEntries(
      DOC_PAGES.map((page) => [page, brokenLinks(page)]).filter(([, links]) => links.length > 0),
    );
    expect(broken).toEqual({});
  });

  it('reaches every documentation page from the README', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const linked = new Set(relativeLinks(readme).map((target) => normalize(target.split('#')[0])));
    const pages = tracked.filter(
      (file) =>
        (file.startsWith('docs/') && !file.startsWith('docs/spec/')) || /^(sdk|dashboard)\/README\.md$/.test(file),
    );
    expect(pages.filter((page) => !linked.has(page))).toEqual([]);
    expect(linked.has('docs/spec/specification.txt')).toBe(true);
  });

  it('has no file that points outside the repository', () => {
    const outside: Record<string, string[]> = {};
    for (const file of tracked) {
      if (file === relative(ROOT, __filename)) continue; // its own patterns and examples
      if (file === 'package-lock.json' || /\.(png|jpe?g|gif|ico|woff2?|mp4|wav|onnx)$/.test(file)) continue;
      const references = outsideReferences(file);
      if (references.length > 0) outside[file] = references;
    }
    expect(outside).toEqual(PENDING_ELSEWHERE);
  });

  it('recognises a reference outside the repository when it sees one', () => {
    // The detector itself, on this very file: it names ../shared and a .md file the repository lacks.
    const self = relative(ROOT, __filename);
    expect(outsideReferences(self)).toEqual(expect.arrayContaining(['../shared', 'API.md']));
  });
});
