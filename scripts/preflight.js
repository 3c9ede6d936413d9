// The system tools the test suites run, checked before anything else so that `npm test` on a machine
// missing one stops within seconds with the list and the install line, instead of failing minutes later
// with "spawn … ENOENT". The one list: README's Prerequisites and .ci/run's apt-get install come from it
// (`node scripts/preflight.js --missing-debian-packages` prints what .ci/run installs).
// Plain Node, no dependencies: it runs before `npm ci` in CI.
'use strict';

const fs = require('node:fs');
const path = require('node:path');

/**
 * Each tool: what the tests run (`commands` on PATH, or `files` of which one must exist), the Debian
 * package and the Homebrew formula that provide it (null: none), and what it is for.
 */
const TOOLS = [
  {
    name: 'ffmpeg',
    commands: [process.env.FFMPEG_PATH ?? 'ffmpeg', process.env.FFPROBE_PATH ?? 'ffprobe'],
    debian: 'ffmpeg',
    brew: 'ffmpeg',
    for: 'the media pipelines and test fixtures',
  },
  {
    name: 'mediainfo',
    commands: [process.env.MEDIAINFO_PATH ?? 'mediainfo'],
    debian: 'mediainfo',
    brew: 'media-info',
    for: 'HDR10 metadata checks',
  },
  {
    name: 'chromium',
    files: [process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'],
    debian: 'chromium',
    brew: '--cask chromium',
    for: 'browser tests (on macOS set CHROMIUM_PATH=/Applications/Chromium.app/Contents/MacOS/Chromium)',
  },
  { name: 'espeak-ng', commands: ['espeak-ng'], debian: 'espeak-ng', brew: 'espeak-ng', for: 'speech fixtures' },
  ...['proxy', 'object', 'container', 'account'].map((role) => ({
    name: `swift-${role}`,
    commands: role === 'proxy' ? ['swift-proxy-server', 'swift-ring-builder'] : [`swift-${role}-server`],
    debian: `swift-${role}`,
    brew: null,
    for: 'the private S3-compatible store (OpenStack Swift) of the storage tests',
  })),
  {
    name: 'prometheus',
    commands: ['prometheus', 'promtool'],
    debian: 'prometheus',
    brew: 'prometheus',
    for: 'the metrics scrape test and the config and alert-rule checks',
  },
  {
    name: 'pgbouncer',
    commands: ['pgbouncer'],
    debian: 'pgbouncer',
    brew: 'pgbouncer',
    for: 'connection pooling tests',
  },
  {
    name: 'redis-server',
    // redis-cli (Debian's redis-tools, a dependency of redis-server) builds the private Redis Cluster.
    commands: ['redis-server', 'redis-cli'],
    debian: 'redis-server',
    brew: 'redis',
    for: 'private Redis servers and the Redis Cluster failover tests',
  },
  {
    name: 'redis-sentinel',
    commands: ['redis-sentinel'],
    debian: 'redis-sentinel',
    brew: 'redis',
    for: 'Redis Sentinel failover tests',
  },
  {
    name: 'lavapipe',
    files: ['/usr/share/vulkan/icd.d', '/etc/vulkan/icd.d'].flatMap((dir) =>
      ['x86_64', 'aarch64', 'i686', 'armv7l'].map((arch) => `${dir}/lvp_icd.${arch}.json`),
    ),
    debian: 'mesa-vulkan-drivers',
    brew: null,
    for: "Vulkan on the CPU for ffmpeg's libplacebo",
  },
];

// Debian keeps daemons such as pgbouncer in sbin, which a normal user's PATH leaves out.
const EXTRA_DIRS = ['/usr/sbin', '/usr/local/sbin', '/sbin'];

function isExecutable(file) {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

function onPath(command) {
  if (command.includes('/')) return isExecutable(command);
  const dirs = (process.env.PATH ?? '').split(path.delimiter).filter(Boolean).concat(EXTRA_DIRS);
  return dirs.some((dir) => isExecutable(path.join(dir, command)));
}

function isInstalled(tool) {
  if (tool.commands) return tool.commands.every(onPath);
  return tool.files.some((file) => fs.existsSync(file));
}

const unique = (values) => [...new Set(values)];

function report(missing) {
  const noun = missing.length === 1 ? 'tool the tests need is' : 'tools the tests need are';
  const lines = [`npm test: ${missing.length} system ${noun} missing:`];
  for (const tool of missing) {
    const what = tool.commands ? tool.commands.join(', ') : tool.files[0];
    lines.push(`  - ${tool.name} (${what}): ${tool.for}`);
  }
  lines.push(
    '',
    'Install on Debian or Ubuntu:',
    `  $(command -v sudo) apt-get install ${unique(missing.map((t) => t.debian)).join(' ')}`,
  );
  const brew = unique(missing.map((t) => t.brew).filter(Boolean));
  const noBrew = missing.filter((t) => !t.brew).map((t) => t.name);
  if (brew.length > 0) {
    const formulae = brew.filter((b) => !b.startsWith('--cask'));
    const casks = brew.filter((b) => b.startsWith('--cask')).map((b) => b.slice('--cask '.length));
    const commands = [];
    if (formulae.length > 0) commands.push(`brew install ${formulae.join(' ')}`);
    if (casks.length > 0) commands.push(`brew install --cask ${casks.join(' ')}`);
    lines.push('Install on macOS:', `  ${commands.join(' && ')}`);
  }
  if (noBrew.length > 0) {
    lines.push(`No macOS equivalent for ${noBrew.join(', ')}: run the tests in a Debian VM or container.`);
  }
  lines.push('(README.md, "Prerequisites", lists every tool.)');
  return lines.join('\n');
}

function main(args) {
  const missing = TOOLS.filter((tool) => !isInstalled(tool));
  if (args.includes('--missing-debian-packages')) {
    process.stdout.write(unique(missing.map((tool) => tool.debian)).join(' ') + '\n');
    return 0;
  }
  if (missing.length === 0) return 0;
  process.stderr.write(report(missing) + '\n');
  return 1;
}

module.exports = { TOOLS };

if (require.main === module) process.exitCode = main(process.argv.slice(2));
