// `npm run bench [-- --quick] [-- --only=reads,submits]`: runs the benchmarks one after another,
// each against a bare baseline in the same run, prints a table and writes bench/results/latest.json
// (a partial run merges its results into the file: bench/lib/results-file.ts).
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ROOT } from './lib/environment';
import { machine, type BenchContext, type BenchResult } from './lib/report';
import { mergeResults, type ResultsFile, type StoredFile } from './lib/results-file';
import { median, round } from './lib/stats';
import { benchDocs } from './docs';
import { benchReads } from './reads';
import { benchFanout } from './fanout';
import { benchStorage } from './storage';
import { benchMemory } from './memory';
import { benchMetrics } from './metrics';
import { benchPipeline } from './pipeline';
import { benchPresets } from './presets';
import { benchQueue } from './queue';
import { benchSegments } from './segments';
import { benchLadder } from './ladder';
import { benchHdr } from './hdr';
import { benchLightMap } from './light-map';
import { benchVad } from './vad';
import { benchChecks } from './checks';
import { benchSubmits } from './submits';
import { benchPurge } from './purge';
import { benchCapacity } from './capacity';
import { benchGrowth } from './growth';
import { benchFairness } from './fairness';

type Bench = (context: BenchContext) => Promise<BenchResult[]>;

const BENCHES: Record<string, Bench> = {
  reads: async (context) => [(await benchReads(context)).result],
  submits: async (context) => [await benchSubmits(context)],
  queue: async (context) => [await benchQueue(context)],
  pipeline: benchPipeline,
  memory: async (context) => [await benchMemory(context)],
  presets: benchPresets,
  fanout: async (context) => [await benchFanout(context)],
  metrics: async (context) => [await benchMetrics(context)],
  storage: (context) => benchStorage(context),
  'storage-upload': (context) => benchStorage(context, true),
  segments: async (context) => [await benchSegments(context)],
  ladder: benchLadder,
  hdr: benchHdr,
  lightmap: async (context) => [await benchLightMap(context)],
  vad: async (context) => [await benchVad(context)],
  checks: benchChecks,
  docs: async (context) => [await benchDocs(context)],
  purge: async (context) => [await benchPurge(context)],
  capacity: async (context) => [await benchCapacity(context)],
  growth: benchGrowth,
  fairness: async (context) => [await benchFairness(context)],
};

/** The summary as a Markdown table (README's "Performance" section shows the latest full run). */
function table(results: BenchResult[]): string {
  const lines = [
    '| benchmark | metric | ours (median) | bare (median) | ours ÷ bare | target | met |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const result of results) {
    lines.push(
      `| ${result.name} | ${result.comparison.metric} | ${round(median(result.comparison.ours))} | ${round(median(result.comparison.bare))} | ${result.ratio} | ${result.target} | ${result.met ? 'yes' : '**no**'} |`,
    );
  }
  return lines.join('\n');
}

/** The results file as it is, or null when there is none yet. */
async function readResults(file: string): Promise<StoredFile | null> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as StoredFile;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const quick = args.includes('--quick');
  const only = args
    .find((arg) => arg.startsWith('--only='))
    ?.slice('--only='.length)
    .split(',');
  // Run only when named: storage-upload (a part of storage); capacity (a model for docs/scaling.md, not a
  // ratio to keep: it starts its own PostgreSQL cluster with pg_createcluster); growth and purge (their
  // first run seeds ten million and one million jobs).
  const ONLY_WHEN_NAMED = ['storage-upload', 'capacity', 'growth', 'purge'];
  const names = only ?? Object.keys(BENCHES).filter((name) => !ONLY_WHEN_NAMED.includes(name));
  const unknown = names.filter((name) => !BENCHES[name]);
  if (unknown.length)
    throw new Error(`unknown benchmark(s) ${unknown.join(', ')}; known: ${Object.keys(BENCHES).join(', ')}`);
  const context: BenchContext = { quick, log: (message) => process.stdout.write(`${message}\n`) };
  const results: BenchResult[] = [];
  const started = Date.now();
  for (const name of names) {
    context.log(`\n== ${name}${quick ? ' (quick)' : ''}`);
    const produced = await BENCHES[name](context);
    for (const result of produced) context.log(JSON.stringify(result));
    results.push(...produced);
  }
  const generatedAt = new Date().toISOString();
  const report: ResultsFile = {
    generated_at: generatedAt,
    mode: quick ? 'quick' : 'full',
    wall_seconds: Math.round((Date.now() - started) / 1000),
    machine: machine(),
    results: results.map((result) => ({ ...result, generated_at: generatedAt })),
  };
  const dir = join(ROOT, 'bench/results');
  await mkdir(dir, { recursive: true });
  const file = join(dir, quick ? 'latest-quick.json' : 'latest.json');
  const previous = only ? await readResults(file) : null;
  await writeFile(file, `${JSON.stringify(mergeResults(previous, report), null, 2)}\n`);
  context.log(`\n${table(results)}`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`benchmark failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
