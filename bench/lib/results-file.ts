// bench/results/latest.json across runs: each result carries the time of the run that produced it, and
// a partial run (`--only=x`) replaces only its own results, so the committed full run's others survive.
import type { BenchResult } from './report';

export interface StampedResult extends BenchResult {
  /** When the run that produced this result ended. */
  generated_at: string;
}

export interface ResultsFile {
  /** When the file was last written (by a full or a partial run). */
  generated_at: string;
  mode: 'quick' | 'full';
  /** The last run's wall time. */
  wall_seconds: number;
  machine: Record<string, unknown>;
  results: StampedResult[];
}

/** The file as read back: one written before results were stamped has no per-result time. */
export interface StoredFile {
  generated_at: string;
  results: (BenchResult & { generated_at?: string })[];
}

/**
 * `run`'s results replace the same-named ones of `previous` where they stood, new names go last, the
 * rest stay as they were. A file written before results were stamped gives them its own time.
 */
export function mergeResults(previous: StoredFile | null, run: ResultsFile): ResultsFile {
  if (!previous) return run;
  const fresh = new Map(run.results.map((result) => [result.name, result]));
  const kept = previous.results.map(
    (result): StampedResult =>
      fresh.get(result.name) ?? { ...result, generated_at: result.generated_at ?? previous.generated_at },
  );
  const added = run.results.filter((result) => !kept.includes(result));
  return { ...run, results: [...kept, ...added] };
}
