// One benchmark's outcome as printed and as written to bench/results/latest.json.
import { cpus, totalmem } from 'node:os';
import { median, round } from './stats';

export interface BenchContext {
  quick: boolean;
  log(message: string): void;
}

export interface Comparison {
  /** What is compared, in the unit `higherIsBetter` applies to (req/s, jobs/s, seconds). */
  metric: string;
  ours: number[];
  bare: number[];
  higherIsBetter: boolean;
}

export interface BenchResult {
  name: string;
  description: string;
  comparison: Comparison;
  /** ours ÷ bare of the medians. */
  ratio: number;
  target: string;
  met: boolean;
  details: Record<string, unknown>;
}

export function compare(
  name: string,
  description: string,
  comparison: Comparison,
  target: { text: string; met: (ratio: number, details: Record<string, unknown>) => boolean },
  details: Record<string, unknown>,
): BenchResult {
  const ratio = round(median(comparison.ours) / median(comparison.bare), 3);
  return {
    name,
    description,
    comparison: {
      ...comparison,
      ours: comparison.ours.map((value) => round(value)),
      bare: comparison.bare.map((value) => round(value)),
    },
    ratio,
    target: target.text,
    met: target.met(ratio, details),
    details,
  };
}

export function machine(): Record<string, unknown> {
  return {
    cores: cpus().length,
    cpu: cpus()[0]?.model ?? 'unknown',
    memory_gib: round(totalmem() / 1024 ** 3, 1),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
  };
}
