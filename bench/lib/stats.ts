// Order statistics for benchmark samples. Medians, not means: one slow round (a GC pause, another
// process waking up) must not move the result.

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

export function round(value: number, digits = 2): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

/**
 * Runs `ours` and `bare` alternately, `rounds` times each, swapping which goes first every round
 * (A B, B A, A B …) so that warm-up, caches and a slowly changing machine weigh on both alike.
 */
export async function alternate<T>(
  rounds: number,
  ours: (round: number) => Promise<T>,
  bare: (round: number) => Promise<T>,
): Promise<{ ours: T[]; bare: T[] }> {
  const result = { ours: [] as T[], bare: [] as T[] };
  for (let round = 0; round < rounds; round++) {
    if (round % 2 === 0) {
      result.ours.push(await ours(round));
      result.bare.push(await bare(round));
    } else {
      result.bare.push(await bare(round));
      result.ours.push(await ours(round));
    }
  }
  return result;
}
