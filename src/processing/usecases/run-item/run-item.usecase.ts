// The process-item unit: take one item of a job and run it — in one pass through the MediaRunner, or
// split into segments (SplitItem) that any worker of the region then encodes — and end it through
// ItemEnding. Safe to run again after a crash or twice at once: an item that already ended is skipped.
import { Inject, Injectable, Logger } from '@nestjs/common';
import { join } from 'node:path';
import { APP_CONFIG, type AppConfig } from '../../../common/config/config';
import { STORAGE, type Storage } from '../../../common/storage/storage';
import { JobLifecycle } from '../../../jobs/job-lifecycle';
import type { JobItemRow, JobRow } from '../../../jobs/job.types';
import { storedSpec } from '../../../jobs/output-options';
import { splitsIntoSegments } from '../../../media/segment-plan';
import { mediaRun } from '../../../metrics/job-metrics';
import { ItemEnding } from '../../item-ending';
import { ItemInput } from '../../item-input';
import { withLightMap } from '../../light-map-step';
import { ItemClock } from '../../item-timings';
import { jobDeadline, timeLeftMs } from '../../job-deadline';
import { MEDIA_RUNNER, type MediaRunner, type RunItemRequest, type RunItemResult } from '../../media-runner';
import { ProcessingRepository } from '../../processing.repository';
import { ProgressWriter } from '../../progress-writer';
import { SegmentsRepository } from '../../segments.repository';
import { pricedSource, recheckSource } from '../../source-recheck';
import { WorkDirs } from '../../work-dirs';
import { WorkerStopping } from '../../worker-stopping';
import { SplitItem, type ItemSplit } from '../split-item/split-item.usecase';

export interface RunItemCommand {
  jobId: string;
  index: number;
  /** The worker's id, recorded on the item. */
  worker: string;
  /** Aborted by a cancel of the job. */
  signal: AbortSignal;
  /** Aborted when the worker stops (SIGTERM): a source download still running is handed back (ItemInput). */
  stopping: AbortSignal;
  /** Called when the job turns out to be no longer processing at a progress mark (a cancel this worker missed). */
  abort(): void;
}

type Outcome = 'succeeded' | 'failed' | 'cancelled' | 'split' | 'ended_elsewhere' | 'handed_back' | 'error';

@Injectable()
export class RunItem {
  private readonly logger = new Logger(RunItem.name);

  constructor(
    private readonly lifecycle: JobLifecycle,
    private readonly repository: ProcessingRepository,
    private readonly segments: SegmentsRepository,
    private readonly input: ItemInput,
    private readonly splitItem: SplitItem,
    private readonly ending: ItemEnding,
    private readonly progress: ProgressWriter,
    private readonly workDirs: WorkDirs,
    @Inject(MEDIA_RUNNER) private readonly runner: MediaRunner,
    @Inject(STORAGE) private readonly storage: Storage,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** The item's segments to queue when it was split (here or before); null when its unit is done. */
  async execute(command: RunItemCommand): Promise<ItemSplit | null> {
    const { jobId, index, signal } = command;
    const clock = new ItemClock();
    const taken = await clock.time('claim', () => this.lifecycle.takeItem(jobId, index, command.worker));
    if (!taken) return null;
    const { job, item } = taken;
    // The job's first take (attempts counts takes of its items) is its start; none of its items has ended yet.
    if (job.attempts === 1) await this.logStart(job, clock);
    const resumed = this.splits(job, item) ? await this.splitBefore(jobId, index) : null;
    if (resumed) return resumed;
    const workDir = await this.workDirs.create(`${jobId}-${index}`);
    let outcome: Outcome = 'error';
    let outputBytes: number | null = null;
    // The local source, once fetched: the output's checks compare with it.
    const source = { path: '' };
    try {
      const run = await this.run(job, item, workDir, command, clock, source);
      if ('segments' in run) {
        outcome = 'split';
        return run;
      }
      // Cancelled: the API already ended the job and released its hold; nothing to store.
      if (signal.aborted) {
        outcome = 'cancelled';
        this.logger.log(
          { job_id: job.id, request_id: job.request_id, item: index },
          'item stopped: the job was cancelled',
        );
        return null;
      }
      if (run.ok) this.progress.phase(job.id, index, 'storing');
      const checkAgainst = {
        sourcePaths: [source.path],
        signal,
        timeLimitMs: Math.max(1, timeLeftMs(jobDeadline(job, this.config))),
      };
      ({ outcome, outputBytes } = await this.ending.end(job, item, run, checkAgainst, clock));
      return null;
    } catch (error) {
      if (error instanceof WorkerStopping) outcome = 'handed_back';
      throw error;
    } finally {
      await clock.time('cleanup', () => this.workDirs.remove(workDir));
      this.logTimings(job, index, outcome, clock, outputBytes);
    }
  }

  /**
   * An sdr2hdr item at least twice SEGMENT_SECONDS long is encoded in segments (0 turns this off): a file in
   * keyframe-cut segments, a package in units of whole HLS segments, each with every rung (SplitItem).
   */
  private splits(job: JobRow, item: JobItemRow): boolean {
    return splitsIntoSegments(job.api, Number(item.duration_seconds), this.config.segmentSeconds);
  }

  /**
   * Split already (this unit ran before, or the reconciler queued the item again): its segments not
   * yet encoded are queued again (a no-op for those waiting or running); none left: the last one's
   * unit joins them.
   */
  private async splitBefore(jobId: string, index: number): Promise<ItemSplit | null> {
    const recorded = await this.segments.list(jobId, index);
    if (!recorded.length) return null;
    const open = recorded.filter((segment) => segment.status !== 'succeeded').map((segment) => segment.segment);
    return { segments: open.length ? open : [recorded[recorded.length - 1].segment] };
  }

  private async run(
    job: JobRow,
    item: JobItemRow,
    workDir: string,
    command: RunItemCommand,
    clock: ItemClock,
    source: { path: string },
  ): Promise<RunItemResult | ItemSplit> {
    const bounds = {
      signal: command.signal,
      stopping: command.stopping,
      timeLimitMs: timeLeftMs(jobDeadline(job, this.config)),
    };
    const input = await this.input.prepare(item, workDir, bounds, clock);
    if (!input.ok) return input;
    source.path = input.path;
    const timeLimitMs = timeLeftMs(jobDeadline(job, this.config));
    if (timeLimitMs <= 0) {
      // Reached here at a (re)start: e.g. a job whose worker kept being killed under it.
      const message = `The job did not finish within its time limit of ${this.config.jobTimeLimitSeconds} s.`;
      return { ok: false, code: 'timeout', message };
    }
    if (this.splits(job, item)) {
      const split = await this.splitItem.execute({
        job,
        item,
        inputPath: input.path,
        workDir,
        signal: command.signal,
        timeLimitMs,
      });
      // null: not worth splitting after all (too few keyframes), or not splittable: one pass.
      if (split) return split;
    }
    const spec = storedSpec(job);
    const priced = pricedSource(job, item);
    const common = {
      inputPath: input.path,
      outputPath: join(workDir, `out-${item.index}`),
      signal: command.signal,
      timeLimitMs,
      onProgress: this.progress.forItem(job.id, item.index, command.abort),
      onStage: (stage: 'probe' | 'encode', ms: number) => clock.add(stage, ms),
      admit: (actual: { durationSeconds: number; width: number | null; height: number | null }) =>
        recheckSource(priced, actual, { maxDurationSeconds: this.config.maxDurationSeconds }),
    };
    const request: RunItemRequest =
      spec.api === 'sdr2hdr' ? { ...common, api: spec.api, output: spec } : { ...common, api: spec.api, output: spec };
    const started = performance.now();
    const result = await this.runner.run(request);
    if (result.ok)
      mediaRun(job.api, result.processedSeconds, (performance.now() - started) / 1000, result.outputHeight);
    if (spec.api !== 'sdr2hdr') return result;
    return clock.time('light_map', () =>
      withLightMap(result, {
        runner: this.runner,
        logger: this.logger,
        sourcePath: input.path,
        // A package's frame comes from its top HDR rung (its segments joined: package-output.ts).
        framePath: result.ok ? result.package?.renditions[0].joinedPath : undefined,
        pngPath: join(workDir, `light-map-${item.index}.png`),
        output: spec,
        signal: command.signal,
        timeLimitMs: Math.max(1, timeLeftMs(jobDeadline(job, this.config))),
        context: { job_id: job.id, item: item.index },
      }),
    );
  }

  private async logStart(job: JobRow, clock: ItemClock): Promise<void> {
    const items = (await clock.time('claim', () => this.repository.openItems(job.id))).length;
    this.logger.log(
      { job_id: job.id, request_id: job.request_id, api: job.api, region: job.region, items },
      'job started',
    );
  }

  /** One line per item run: where its time went (operators and bench/pipeline.ts read these). */
  private logTimings(job: JobRow, index: number, outcome: Outcome, clock: ItemClock, outputBytes: number | null): void {
    clock.observe(job.api);
    this.logger.log(
      {
        job_id: job.id,
        request_id: job.request_id,
        item: index,
        api: job.api,
        backend: this.storage.backend,
        outcome,
        output_bytes: outputBytes,
        ...clock.report(),
      },
      'item timings',
    );
  }
}
