// Where the tests' time went.
//
//   node scripts/test-times.js [.jest-cpu.jsonl] [--top=25] [--run=<pid>] [--before=<other.jsonl>] [--markdown]
//   node scripts/test-times.js <report.json> [--top=25]
//   node scripts/test-times.js <after.json> --before=<before.json> [--top=25] [--markdown]
//
// The first (the default) reads the CPU and wall seconds every test file appends to .jest-cpu.jsonl
// (test/support/jest-environment.js), the newest record of each file (of one run with --run), and prints
// the slowest files by CPU with their share of the total CPU and of the total wall time; with --before
// it sets another such file (or the same with other runs) beside it. CPU seconds are what a file costs
// whatever else the machine runs; wall seconds on a loaded machine mostly measure the load.
// The others read Jest's JSON report (`npm test` writes .jest-results.json): the run's wall time, the sum
// of its files' times, the number of tests, and the slowest files with their share of that sum; with
// --before two runs side by side, per file; --markdown prints the table as docs/development.md keeps it.
'use strict';

const { existsSync, readFileSync } = require('node:fs');
const path = require('node:path');

const args = process.argv.slice(2);
const option = (name) => args.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
const files = args.filter((arg) => !arg.startsWith('--'));
const top = Number(option('top') ?? 25);
const markdown = args.includes('--markdown');

/** Per file (relative path) its seconds and tests, and the run's totals. */
function readRun(file) {
  const report = JSON.parse(readFileSync(file, 'utf8'));
  const root = report.testResults.length ? commonRoot(report.testResults.map((r) => r.name)) : '';
  const perFile = new Map();
  let start = Infinity;
  let end = 0;
  for (const result of report.testResults) {
    const began = result.perfStats?.start ?? result.startTime;
    const ended = result.perfStats?.end ?? result.endTime;
    start = Math.min(start, began);
    end = Math.max(end, ended);
    perFile.set(path.relative(root, result.name), {
      seconds: (ended - began) / 1000,
      tests: result.assertionResults.length,
      status: result.status,
    });
  }
  const sum = [...perFile.values()].reduce((total, f) => total + f.seconds, 0);
  return {
    perFile,
    sum,
    wall: report.testResults.length ? (end - start) / 1000 : 0,
    tests: report.numTotalTests,
    passed: report.numPassedTests,
    failed: report.numFailedTests,
    suites: report.numTotalTestSuites,
  };
}

/** The folder the test paths share, so that they print as test/jobs/…, src/…. */
function commonRoot(names) {
  let root = path.dirname(names[0]);
  while (!names.every((name) => name.startsWith(root + path.sep)) && root !== path.dirname(root))
    root = path.dirname(root);
  // The repository root: the folder above test/ or src/.
  while (/\/(test|src)(\/|$)/.test(root)) root = path.dirname(root);
  return root;
}

const minutes = (seconds) => `${Math.floor(seconds / 60)}:${String(Math.round(seconds % 60)).padStart(2, '0')}`;
const pct = (part, whole) => `${((100 * part) / whole).toFixed(1)}%`;

function summary(label, run) {
  return (
    `${label}: ${run.suites} files, ${run.tests} tests (${run.passed} passed, ${run.failed} failed); ` +
    `wall ${minutes(run.wall)}, sum of file times ${minutes(run.sum)} (${(run.sum / Math.max(run.wall, 1)).toFixed(1)} files at once on average)`
  );
}

/** Per file its newest record in a .jest-cpu.jsonl (of run `run` when given). */
function readCpu(file, run) {
  if (!existsSync(file)) {
    console.error(
      `${file}: no records yet — every Jest run appends one line per test file (npm run test:one -- <file>)`,
    );
    process.exit(1);
  }
  const perFile = new Map();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    let record;
    try {
      record = JSON.parse(line);
    } catch {
      continue; // a line cut short by a killed run
    }
    if (run && String(record.run) !== String(run)) continue;
    perFile.set(record.file, record);
  }
  const total = (key) => [...perFile.values()].reduce((sum, r) => sum + r[key], 0);
  return { perFile, cpu: total('cpu'), wall: total('wall') };
}

function printCpu() {
  const after = readCpu(files[0] ?? '.jest-cpu.jsonl', option('run'));
  const beforeFile = option('before');
  const before = beforeFile ? readCpu(beforeFile, option('before-run')) : undefined;
  const seconds = (value) => (value === undefined ? '–' : value.toFixed(1));
  if (!before) {
    console.log(
      `${after.perFile.size} files: CPU ${after.cpu.toFixed(1)} s (${minutes(after.cpu)}), wall ${after.wall.toFixed(1)} s (${minutes(after.wall)}) summed over the files`,
    );
    console.log('');
    console.log(`${'CPU s'.padStart(8)} ${'share'.padStart(6)} ${'wall s'.padStart(8)} ${'share'.padStart(6)}  file`);
    const rows = [...after.perFile.values()].sort((a, b) => b.cpu - a.cpu).slice(0, top);
    for (const r of rows)
      console.log(
        `${seconds(r.cpu).padStart(8)} ${pct(r.cpu, after.cpu).padStart(6)} ${seconds(r.wall).padStart(8)} ${pct(r.wall, after.wall).padStart(6)}  ${r.file}`,
      );
    const shown = rows.reduce((sum, r) => sum + r.cpu, 0);
    console.log(`the ${rows.length} costliest files: ${pct(shown, after.cpu)} of the CPU`);
    return;
  }
  const names = [...new Set([...after.perFile.keys(), ...before.perFile.keys()])];
  const rows = names
    .map((name) => ({ name, b: before.perFile.get(name), a: after.perFile.get(name) }))
    .sort((x, y) => (y.b?.cpu ?? 0) - (x.b?.cpu ?? 0))
    .slice(0, top);
  if (markdown) {
    console.log('| file | CPU s before | CPU s after | wall s before | wall s after |');
    console.log('|---|---:|---:|---:|---:|');
    for (const { name, b, a } of rows)
      console.log(
        `| \`${name}\` | ${seconds(b?.cpu)} | ${seconds(a?.cpu)} | ${seconds(b?.wall)} | ${seconds(a?.wall)} |`,
      );
  } else {
    console.log(
      `${'CPU before'.padStart(10)} ${'after'.padStart(8)} ${'wall before'.padStart(11)} ${'after'.padStart(8)}  file`,
    );
    for (const { name, b, a } of rows)
      console.log(
        `${seconds(b?.cpu).padStart(10)} ${seconds(a?.cpu).padStart(8)} ${seconds(b?.wall).padStart(11)} ${seconds(a?.wall).padStart(8)}  ${name}`,
      );
  }
}

function printReport() {
  const after = readRun(files[0]);
  const beforeFile = option('before');
  if (!beforeFile) {
    console.log(summary('run', after));
    console.log('');
    console.log(`${'seconds'.padStart(8)} ${'share'.padStart(6)} ${'tests'.padStart(5)}  file`);
    const rows = [...after.perFile.entries()].sort((a, b) => b[1].seconds - a[1].seconds).slice(0, top);
    for (const [name, f] of rows)
      console.log(
        `${f.seconds.toFixed(1).padStart(8)} ${pct(f.seconds, after.sum).padStart(6)} ${String(f.tests).padStart(5)}  ${name}`,
      );
    const shown = rows.reduce((total, [, f]) => total + f.seconds, 0);
    console.log(`the ${rows.length} slowest files: ${pct(shown, after.sum)} of the sum`);
  } else {
    const before = readRun(beforeFile);
    console.log(summary('before', before));
    console.log(summary('after ', after));
    console.log('');
    const names = [...new Set([...after.perFile.keys(), ...before.perFile.keys()])];
    const rows = names
      .map((name) => ({ name, b: before.perFile.get(name), a: after.perFile.get(name) }))
      .sort((x, y) => (y.b?.seconds ?? 0) - (x.b?.seconds ?? 0))
      .slice(0, top);
    const cell = (f) => (f ? f.seconds.toFixed(1) : '–');
    const tests = (f) => (f ? String(f.tests) : '–');
    if (markdown) {
      console.log('| file | before s | share | after s | share | tests before → after |');
      console.log('|---|---:|---:|---:|---:|---:|');
      for (const { name, b, a } of rows)
        console.log(
          `| \`${name}\` | ${cell(b)} | ${b ? pct(b.seconds, before.sum) : '–'} | ${cell(a)} | ${a ? pct(a.seconds, after.sum) : '–'} | ${tests(b)} → ${tests(a)} |`,
        );
      console.log(
        `| **all ${names.length} files (sum)** | ${before.sum.toFixed(0)} | | ${after.sum.toFixed(0)} | | ${before.tests} → ${after.tests} |`,
      );
      console.log(`| **wall time of the Jest run** | ${before.wall.toFixed(0)} | | ${after.wall.toFixed(0)} | | |`);
    } else {
      console.log(`${'before'.padStart(8)} ${'after'.padStart(8)}  file`);
      for (const { name, b, a } of rows) console.log(`${cell(b).padStart(8)} ${cell(a).padStart(8)}  ${name}`);
    }
  }
}

if (files[0]?.endsWith('.json')) printReport();
else printCpu();
