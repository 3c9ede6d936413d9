// The process-segment unit: one segment of a split item — a file item's keyframe-cut part encoded exactly
// as the whole item would be (same settings, no audio), or a package item's unit of whole HLS segments with
// every rung (src/media/hls/package-parts.ts) — its encoded part(s) stored; the unit that ends the item's
// last segment joins them (JoinItem). Safe to run again: a segment that ended is not encoded twice, and a
// unit run again after its worker died while joining joins. Infrastructure failures throw (BullMQ retries
// this segment alone); an outage of PostgreSQL or Redis when the segment ends is waited out instead, so a
// finished encode is never thrown away.
import { Inject, Injectable, Logger } from '@nestjs/common';
import { join } from 'node:path';
import { APP_CONFIG, type AppConfig } from '../../../common/config/config';
import { segmentsPrefix, STORAGE, type Storage } from '../../../common/storage/storage';
import { JobLifecycle } from '../../../jobs/job-lifecycle';
import { storedSpec } from '../../../jobs/output-options';
import { ItemEnding } from '../../item-ending';
import { jobDeadline, timeLeftMs } from '../../job-deadline';
import type { HdrOutputSpec } from '../../../media/output-spec';
import { MEDIA_RUNNER, type EncodeSegmentResult, type MediaFailure, type MediaRunner } from '../../media-runner';
import { OUTAGE_POLICIES, retryThroughOutage, type OutagePolicies } from '../../outage-retry';
import { ProgressWriter } from '../../progress-writer';
import { SegmentFiles } from '../../segment-files';
import { SegmentsRepository, type SegmentEnd, type SegmentRow } from '../../segments.repository';
import { WorkDirs } from '../../work-dirs';
import { JoinItem } from '../join-item/join-item.usecase';
import { openItem } from '../open-item';

/** A unit's media as encoded: how to store it (its encoded_key), or why the item fails. */
type Encoded = { ok: true; processedSeconds: number; store(): Promise<string> } | MediaFailure;

/** What a unit's encode works from. */
interface Unit {
  taken: SegmentRow;
  source: string;
  workDir: string;
  spec: HdrOutputSpec;
  timeLimitMs: number;
}

export interface EncodeSegmentCommand {
  jobId: string;
  index: number;
  segment: number;
  worker: string;
  signal: AbortSignal;
  /** Called when the job turns out to be no longer processing at a progress mark. */
  abort(): void;
}

@Injectable()
export class EncodeSegment {
  private readonly logger = new Logger(EncodeSegment.name);

  constructor(
    private readonly lifecycle: JobLifecycle,
    private readonly segments: SegmentsRepository,
    private readonly files: SegmentFiles,
    private readonly ending: ItemEnding,
    private readonly progress: ProgressWriter,
    private readonly joinItem: JoinItem,
    private readonly workDirs: WorkDirs,
    @Inject(MEDIA_RUNNER) private readonly runner: MediaRunner,
    @Inject(STORAGE) private readonly storage: Storage,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(OUTAGE_POLICIES) private readonly outages: OutagePolicies,
  ) {}

  async execute(command: EncodeSegmentCommand): Promise<void> {
    const { jobId, index, segment, signal } = command;
    const taken = await this.segments.takeSegment(jobId, index, segment, command.worker);
    if (!taken) return this.notTaken(jobId, index, signal);
    const opened = await openItem(this.lifecycle, jobId, index);
    if (!opened) return;
    const { job, item } = opened;
    const spec = storedSpec(job);
    if (spec.api !== 'sdr2hdr') throw new Error(`segment of a ${spec.api} item`);
    const timeLimitMs = timeLeftMs(jobDeadline(job, this.config));
    const ended = await this.workDirs.using(
      `${jobId}-${index}-s${segment}`,
      async (workDir): Promise<SegmentEnd | 'drop'> => {
        const hls = spec.package === 'hls';
        const local = join(workDir, hls ? 'source' : 'part.mp4');
        const source = await this.storage.localFile(taken.source_key, local, signal);
        if (!source) throw new Error(`segment ${segment} of ${jobId}/${index}: its source part is gone`);
        const unit = { taken, source, workDir, spec, timeLimitMs };
        const result: Encoded =
          timeLimitMs <= 0
            ? { ok: false, code: 'timeout' }
            : hls
              ? await this.encodePackageUnit(command, unit)
              : await this.encodeFileSegment(command, unit);
        if (signal.aborted || !(await this.segments.itemOpen(jobId, index))) return 'drop';
        if (!result.ok) {
          await this.segments.failSegment(jobId, index, segment);
          await this.ending.end(job, item, result, { sourcePaths: [source], signal, timeLimitMs });
          return 'drop';
        }
        // An outage of the object store throws: BullMQ runs this segment again.
        const encodedKey = await result.store();
        return this.endSegment(command, { encodedKey, processedSeconds: result.processedSeconds });
      },
    );
    // Cancelled, failed, or the item ended otherwise: nothing of its segments is kept.
    if (ended === 'drop' || ended === 'item_not_open') await this.files.remove(jobId, index);
    else if (ended === 'last') await this.joinItem.execute({ jobId, index, signal });
  }

  /** A file item's segment: its source part encoded exactly as the whole item would be, stored as one file. */
  private async encodeFileSegment(command: EncodeSegmentCommand, unit: Unit): Promise<Encoded> {
    const { jobId, index, segment, signal } = command;
    const result: EncodeSegmentResult = await this.runner.encodeSegment({
      inputPath: unit.source,
      outputPath: join(unit.workDir, 'enc.mp4'),
      output: unit.spec,
      signal,
      timeLimitMs: unit.timeLimitMs,
      onProgress: this.progress.forSegment(jobId, index, segment, command.abort),
    });
    if (!result.ok) return result;
    const key = `${segmentsPrefix(jobId, index)}enc-${segment}.mp4`;
    const store = async () => {
      await this.storage.writeFile(key, result.path);
      return key;
    };
    return { ok: true, processedSeconds: result.processedSeconds, store };
  }

  /**
   * A package item's unit (src/media/hls/package-parts.ts): its range of the whole source decoded once and
   * every rung encoded, each rung's part stored under the unit's own prefix (its encoded_key).
   */
  private async encodePackageUnit(command: EncodeSegmentCommand, unit: Unit): Promise<Encoded> {
    const { jobId, index, segment, signal } = command;
    const all = await this.segments.list(jobId, index);
    const result = await this.runner.encodePackagePart({
      inputPath: unit.source,
      unit: { start: Number(unit.taken.start_seconds), duration: Number(unit.taken.duration_seconds) },
      last: all[all.length - 1]?.segment === segment,
      partsDir: join(unit.workDir, 'parts'),
      output: unit.spec,
      signal,
      timeLimitMs: unit.timeLimitMs,
      onProgress: this.progress.forSegment(jobId, index, segment, command.abort),
    });
    if (!result.ok) return result;
    const prefix = `${segmentsPrefix(jobId, index)}enc-${segment}/`;
    const store = async () => {
      for (const [folder, path] of Object.entries(result.files))
        await this.storage.writeFile(`${prefix}${folder}.mp4`, path);
      return prefix;
    };
    return { ok: true, processedSeconds: result.processedSeconds, store };
  }

  /** Taken already, or ended: a unit run again after its worker died while joining joins. */
  private async notTaken(jobId: string, index: number, signal: AbortSignal): Promise<void> {
    if (!(await this.segments.itemOpen(jobId, index))) return this.files.remove(jobId, index);
    const all = await this.segments.list(jobId, index);
    if (all.length && all.every((part) => part.status === 'succeeded'))
      await this.joinItem.execute({ jobId, index, signal });
  }

  private endSegment(
    { jobId, index, segment }: EncodeSegmentCommand,
    ended: { encodedKey: string; processedSeconds: number },
  ): Promise<SegmentEnd> {
    return retryThroughOutage(() => this.segments.endSegment(jobId, index, segment, ended), this.outages.dependency, {
      onRetry: (error) =>
        this.logger.warn(
          { job_id: jobId, item: index, segment, err: error },
          'dependency unavailable while ending a segment; trying again',
        ),
    });
  }
}
