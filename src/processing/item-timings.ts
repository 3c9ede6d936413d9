// Where one item's time goes inside a worker, stage by stage: one "item timings" log line per item
// (operators and bench/pipeline.ts read it) and the mediajobs_item_stage_seconds histogram.
import { itemStageSeconds } from '../metrics/job-metrics';

/**
 * claim: take the item (and the job's start); input: fetch the source (an S3 download, a URL download;
 * nothing on the local backend); check: the block list on its bytes; probe: ffprobe of the local input
 * again; encode: the media tools' wall time; light_map: an sdr2hdr output's light map (light-map-step.ts);
 * verify: the output measured from the file and its checks (src/media/output-checks.ts); store: the
 * output into storage; end: the ending transaction (item, asset, and the job's settlement when it was
 * the last item); cleanup: the item's work folder removed.
 */
export const ITEM_STAGES = [
  'claim',
  'input',
  'check',
  'probe',
  'encode',
  'light_map',
  'verify',
  'store',
  'end',
  'cleanup',
] as const;
export type ItemStage = (typeof ITEM_STAGES)[number];

export class ItemClock {
  private readonly started = performance.now();
  private readonly stages: Partial<Record<ItemStage, number>> = {};

  /** Runs `work`, adding its wall time to `stage` (also when it throws). */
  async time<T>(stage: ItemStage, work: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      return await work();
    } finally {
      this.add(stage, performance.now() - started);
    }
  }

  add(stage: ItemStage, ms: number): void {
    this.stages[stage] = (this.stages[stage] ?? 0) + ms;
  }

  /** The stages in ms (rounded to 0.1), the total since the clock started, and what no stage accounts for. */
  report(): { stages_ms: Partial<Record<ItemStage, number>>; total_ms: number; other_ms: number } {
    const total = performance.now() - this.started;
    const stages: Partial<Record<ItemStage, number>> = {};
    let counted = 0;
    for (const stage of ITEM_STAGES) {
      const ms = this.stages[stage];
      if (ms === undefined) continue;
      stages[stage] = tenths(ms);
      counted += ms;
    }
    return { stages_ms: stages, total_ms: tenths(total), other_ms: tenths(Math.max(0, total - counted)) };
  }

  /** Records each stage in the histogram (seconds). */
  observe(api: string): void {
    for (const stage of ITEM_STAGES) {
      const ms = this.stages[stage];
      if (ms !== undefined) itemStageSeconds.observe({ api, stage }, ms / 1000);
    }
  }
}

function tenths(ms: number): number {
  return Math.round(ms * 10) / 10;
}
