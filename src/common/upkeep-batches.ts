// The one way background upkeep (retention purge, webhook event purge, storage sweeper) walks through
// work of any size: a batch of at most UPKEEP_BATCH_SIZE, each its own short statement or transaction,
// then a pause at least as long as the batch took (and never shorter than UPKEEP_BATCH_PAUSE_MS). A
// purge of a million rows thus never holds a long transaction, many locks or a whole core of the
// database: requests keep their latency (bench/purge.ts measures it), and the work simply takes longer.
import type { AppConfig } from './config/config';

export interface BatchRun {
  batches: number;
  /** What the steps reported, summed (rows deleted, objects removed). */
  done: number;
}

export interface BatchPlan {
  size: number;
  pauseMs: number;
  /** Checked before each batch: true stops the walk (the process is shutting down). */
  stopped?: () => boolean;
}

export function batchPlan(
  config: Pick<AppConfig, 'upkeepBatchSize' | 'upkeepBatchPauseMs'>,
  stopped?: () => boolean,
): BatchPlan {
  return { size: config.upkeepBatchSize, pauseMs: config.upkeepBatchPauseMs, stopped };
}

export const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms).unref());

/**
 * Runs `step(size)` until it reports fewer than `size` (the work is done) or the plan is stopped.
 * `step` does one batch and says how many rows it handled.
 */
export async function inBatches(plan: BatchPlan, step: (size: number) => Promise<number>): Promise<BatchRun> {
  const run: BatchRun = { batches: 0, done: 0 };
  for (;;) {
    if (plan.stopped?.()) return run;
    const started = performance.now();
    const done = await step(plan.size);
    run.batches++;
    run.done += done;
    if (done < plan.size) return run;
    await pause(Math.max(plan.pauseMs, performance.now() - started));
  }
}

/** Pauses between batches of a walk the caller drives itself (the sweeper lists storage as it goes). */
export class BatchPacer {
  private started = performance.now();

  constructor(private readonly plan: BatchPlan) {}

  /** After a batch: waits as `inBatches` does; false when the plan is stopped. */
  async next(): Promise<boolean> {
    await pause(Math.max(this.plan.pauseMs, performance.now() - this.started));
    this.started = performance.now();
    return !this.plan.stopped?.();
  }
}
