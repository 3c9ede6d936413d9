import type { BenchResult } from '../../bench/lib/report';
import { mergeResults, type ResultsFile } from '../../bench/lib/results-file';

function result(name: string, ratio: number, generatedAt?: string): BenchResult & { generated_at?: string } {
  return {
    name,
    description: `${name} bench`,
    comparison: { metric: 'req/s', ours: [ratio], bare: [1], higherIsBetter: true },
    ratio,
    target: '≥ 0.5',
    met: ratio >= 0.5,
    details: {},
    ...(generatedAt ? { generated_at: generatedAt } : {}),
  };
}

const machine = { cores: 2 };

describe('mergeResults (bench/results/latest.json after a run)', () => {
  const FULL = '2026-11-26T04:53:09.411Z';
  const PARTIAL = '2026-11-26T14:10:00.000Z';
  // A full run's file as committed before results carried their own time.
  const committed = {
    generated_at: FULL,
    results: [result('reads', 0.65), result('submits', 0.7), result('queue', 0.02)],
  };

  /** A run's file at PARTIAL holding one result. */
  function run(name: string, ratio: number, wallSeconds: number): ResultsFile {
    return {
      generated_at: PARTIAL,
      mode: 'full',
      wall_seconds: wallSeconds,
      machine,
      results: [{ ...result(name, ratio), generated_at: PARTIAL }],
    };
  }

  it('a partial run replaces its own results in place and keeps the others with their own time', () => {
    const partial = run('submits', 0.8, 40);
    const merged = mergeResults(committed, partial);
    expect(merged.results.map((r) => [r.name, r.ratio, r.generated_at])).toEqual([
      ['reads', 0.65, FULL],
      ['submits', 0.8, PARTIAL],
      ['queue', 0.02, FULL],
    ]);
    expect(merged).toMatchObject({ generated_at: PARTIAL, wall_seconds: 40 });

    // A second partial run keeps the first one's time on what it did not rerun.
    const later = '2026-11-26T15:00:00.000Z';
    const again = mergeResults(merged, {
      ...partial,
      generated_at: later,
      results: [{ ...result('queue', 0.03), generated_at: later }],
    });
    expect(again.results.map((r) => [r.name, r.generated_at])).toEqual([
      ['reads', FULL],
      ['submits', PARTIAL],
      ['queue', later],
    ]);
  });

  it('a result the file did not have goes last; with no file the run is the file', () => {
    const segments = run('segments', 0.9, 5);
    expect(mergeResults(committed, segments).results.map((r) => r.name)).toEqual([
      'reads',
      'submits',
      'queue',
      'segments',
    ]);
    expect(mergeResults(null, segments)).toEqual(segments);
  });
});
