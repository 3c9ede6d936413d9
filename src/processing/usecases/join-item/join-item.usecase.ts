// The end of a segmented item: a file item's encoded segments joined without re-encoding (the MediaRunner's
// concat) with the source's audio muxed once; a package item's units packaged rung by rung by stream copy
// (MediaRunner.joinPackage); then the item ended through ItemEnding as a one-pass item would be. Run by the
// unit that ended the item's last segment.
import { Inject, Injectable, Logger } from '@nestjs/common';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { APP_CONFIG, type AppConfig } from '../../../common/config/config';
import { STORAGE, type Storage } from '../../../common/storage/storage';
import { JobLifecycle } from '../../../jobs/job-lifecycle';
import type { JobItemRow, JobRow } from '../../../jobs/job.types';
import { storedSpec } from '../../../jobs/output-options';
import type { HdrOutputSpec } from '../../../media/output-spec';
import { ItemEnding } from '../../item-ending';
import { jobDeadline, timeLeftMs } from '../../job-deadline';
import { withLightMap, type LightMapStep } from '../../light-map-step';
import { MEDIA_RUNNER, type MediaRunner, type RunItemResult } from '../../media-runner';
import { ProgressWriter } from '../../progress-writer';
import { SegmentFiles } from '../../segment-files';
import { SegmentsRepository, type SegmentRow } from '../../segments.repository';
import { WorkDirs } from '../../work-dirs';
import { openItem } from '../open-item';

export interface JoinItemCommand {
  jobId: string;
  index: number;
  signal: AbortSignal;
}

@Injectable()
export class JoinItem {
  private readonly logger = new Logger(JoinItem.name);

  constructor(
    private readonly lifecycle: JobLifecycle,
    private readonly segments: SegmentsRepository,
    private readonly files: SegmentFiles,
    private readonly ending: ItemEnding,
    private readonly progress: ProgressWriter,
    private readonly workDirs: WorkDirs,
    @Inject(MEDIA_RUNNER) private readonly runner: MediaRunner,
    @Inject(STORAGE) private readonly storage: Storage,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Infrastructure failures throw (BullMQ runs the last segment's unit again, which joins again). */
  async execute({ jobId, index, signal }: JoinItemCommand): Promise<void> {
    const opened = await openItem(this.lifecycle, jobId, index);
    if (!opened) return;
    const { job, item } = opened;
    const spec = storedSpec(job);
    if (spec.api !== 'sdr2hdr') throw new Error(`join of a ${spec.api} item`);
    const segments = await this.segments.list(jobId, index);
    const deadline = jobDeadline(job, this.config);
    this.progress.phase(jobId, index, 'joining');
    if (spec.package === 'hls') return this.joinPackage(job, item, spec, segments, signal);
    await this.workDirs.using(`${jobId}-${index}-join`, async (workDir) => {
      const parts: string[] = [];
      for (const segment of segments) parts.push(await this.encodedPart(segment, workDir, signal));
      // The source's parts as split (stream copies): the joined output's checks compare with them.
      const sources: string[] = [];
      for (const segment of segments) sources.push(await this.sourcePart(segment, workDir, signal));
      const first = segments[0];
      let audio: { path: string; codec: string } | null = null;
      if (first.audio_key && first.audio_codec) {
        const path = await this.storage.localFile(first.audio_key, join(workDir, 'audio.mov'), signal);
        if (!path) throw new Error(`${jobId}/${index}: the source's audio is gone`);
        audio = { path, codec: first.audio_codec };
      }
      const joined = await this.runner.join({
        parts,
        audio,
        outputPath: join(workDir, `out-${index}`),
        output: spec,
        signal,
        timeLimitMs: Math.max(1, timeLeftMs(deadline)),
      });
      if (signal.aborted) return;
      // The middle segment's encoded part beside the source part it was made from: one light map per item.
      const middle = Math.floor(segments.length / 2);
      await this.end(job, item, joined, {
        frame: {
          sourcePath: sources[middle],
          framePath: parts[middle],
          frameOffsetSeconds: Number(segments[middle].start_seconds),
        },
        sourcePaths: sources,
        workDir,
        spec,
        signal,
      });
    });
  }

  /**
   * A package item's units: every rung's parts packaged by stream copy and the audio encoded once from the
   * source (MediaRunner.joinPackage), checked and stored as a one-pass package is.
   */
  private async joinPackage(
    job: JobRow,
    item: JobItemRow,
    spec: HdrOutputSpec,
    segments: SegmentRow[],
    signal: AbortSignal,
  ): Promise<void> {
    const { id: jobId } = job;
    const { index } = item;
    const deadline = jobDeadline(job, this.config);
    await this.workDirs.using(`${jobId}-${index}-join`, async (workDir) => {
      // Every unit stored the same whole source (SplitItem.splitPackage).
      const source = await this.sourcePart(segments[0], workDir, signal);
      const unitDirs: string[] = [];
      for (const segment of segments) {
        if (!segment.encoded_key) throw new Error(`unit ${segment.segment} of ${jobId}/${index}: no encoded parts`);
        // The unit's rung parts side by side in one folder (a local store answers its own, S3 ours).
        let dir: string | null = null;
        await mkdir(join(workDir, `enc-${segment.segment}`), { recursive: true });
        for await (const entry of this.storage.list(segment.encoded_key)) {
          const name = entry.key.slice(segment.encoded_key.length);
          const part = await this.storage.localFile(entry.key, join(workDir, `enc-${segment.segment}`, name), signal);
          if (!part) throw new Error(`unit ${segment.segment} of ${jobId}/${index}: its part ${name} is gone`);
          dir = dirname(part);
        }
        if (!dir) throw new Error(`unit ${segment.segment} of ${jobId}/${index}: its parts are gone`);
        unitDirs.push(dir);
      }
      const joined = await this.runner.joinPackage({
        inputPath: source,
        unitDirs,
        outputPath: join(workDir, `out-${index}`),
        output: spec,
        signal,
        timeLimitMs: Math.max(1, timeLeftMs(deadline)),
      });
      if (signal.aborted) return;
      await this.end(job, item, joined, {
        // As one pass: the frame of the top HDR rung (its segments joined).
        frame: { sourcePath: source, framePath: joined.ok ? joined.package?.renditions[0].joinedPath : undefined },
        sourcePaths: [source],
        workDir,
        spec,
        signal,
      });
    });
  }

  /**
   * Either join's end, as a one-pass item's: the light map from `frame`, the item ended (checked, stored,
   * settled) through ItemEnding, and the item's temporary segments removed.
   */
  private async end(
    job: JobRow,
    item: JobItemRow,
    joined: RunItemResult,
    step: {
      frame: Pick<LightMapStep, 'sourcePath' | 'framePath' | 'frameOffsetSeconds'>;
      sourcePaths: string[];
      workDir: string;
      spec: HdrOutputSpec;
      signal: AbortSignal;
    },
  ): Promise<void> {
    const { signal } = step;
    const deadline = jobDeadline(job, this.config);
    const result = await withLightMap(joined, {
      ...step.frame,
      runner: this.runner,
      logger: this.logger,
      pngPath: join(step.workDir, `light-map-${item.index}.png`),
      output: step.spec,
      signal,
      timeLimitMs: Math.max(1, timeLeftMs(deadline)),
      context: { job_id: job.id, item: item.index },
    });
    if (signal.aborted) return;
    if (result.ok) this.progress.phase(job.id, item.index, 'storing');
    await this.ending.end(job, item, result, {
      sourcePaths: step.sourcePaths,
      signal,
      timeLimitMs: Math.max(1, timeLeftMs(deadline)),
    });
    await this.files.remove(job.id, item.index);
  }

  private async sourcePart(segment: SegmentRow, workDir: string, signal: AbortSignal): Promise<string> {
    const part = await this.storage.localFile(segment.source_key, join(workDir, `src-${segment.segment}.mp4`), signal);
    if (!part)
      throw new Error(`segment ${segment.segment} of ${segment.job_id}/${segment.item_index}: its source part is gone`);
    return part;
  }

  private async encodedPart(segment: SegmentRow, workDir: string, signal: AbortSignal): Promise<string> {
    const part = segment.encoded_key
      ? await this.storage.localFile(segment.encoded_key, join(workDir, `enc-${segment.segment}.mp4`), signal)
      : null;
    if (!part)
      throw new Error(
        `segment ${segment.segment} of ${segment.job_id}/${segment.item_index}: its encoded part is gone`,
      );
    return part;
  }
}
