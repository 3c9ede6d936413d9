// Splitting a long sdr2hdr item (SEGMENT_SECONDS): a file item's video cut at keyframes without
// re-encoding, the parts and the source's audio stored for the workers that encode and join them; a package
// item's units planned on frames and its source stored once (splitPackage). The segments are recorded; any
// worker of the region then encodes them (EncodeSegment).
import { Inject, Injectable, Logger } from '@nestjs/common';
import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { APP_CONFIG, type AppConfig } from '../../../common/config/config';
import { inTurns } from '../../../common/in-turns';
import { segmentsPrefix, STORAGE, StorageUnavailableError, type Storage } from '../../../common/storage/storage';
import type { JobItemRow, JobRow } from '../../../jobs/job.types';
import { storedSpec } from '../../../jobs/output-options';
import type { ProbeResult } from '../../../media/media.types';
import { planPackageUnits, planSegments } from '../../../media/segment-plan';
import { STORE_FAILED } from '../../item-ending';
import { MEDIA_RUNNER, type MediaFailure, type MediaRunner, type ToolFailure } from '../../media-runner';
import { SegmentFiles } from '../../segment-files';
import { SegmentsRepository, type NewSegment } from '../../segments.repository';
import { pricedSource, recheckSource } from '../../source-recheck';

/**
 * Segment parts stored at once after a split: a part of up to 64 MiB goes to S3 in one PUT held in
 * memory (Storage.writeFile), so this bounds the split's memory, whatever the video's length.
 */
const SEGMENT_STORES_AT_ONCE = 2;

/** An item split into segments (each to be queued as a process-segment unit); its unit is done. */
export interface ItemSplit {
  segments: number[];
}

export interface SplitItemCommand {
  job: JobRow;
  item: JobItemRow;
  /** The item's input, local. */
  inputPath: string;
  workDir: string;
  signal: AbortSignal;
  timeLimitMs: number;
}

@Injectable()
export class SplitItem {
  private readonly logger = new Logger(SplitItem.name);

  constructor(
    private readonly segments: SegmentsRepository,
    private readonly files: SegmentFiles,
    @Inject(MEDIA_RUNNER) private readonly runner: MediaRunner,
    @Inject(STORAGE) private readonly storage: Storage,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * The recorded segments; a failure that ends the item; or null: one pass after all (the probe's
   * verdict is the one-pass runner's to give, or the keyframes allow one segment only).
   */
  async execute(command: SplitItemCommand): Promise<ItemSplit | MediaFailure | null> {
    const { job, item, inputPath, workDir, signal } = command;
    const run = { signal, timeLimitMs: command.timeLimitMs };
    const probed = await this.runner.probe(inputPath, 'sdr2hdr', signal);
    if (!probed.ok || !probed.probe.video || probed.probe.encrypted) return null;
    const { video, audio: audioStream, durationSeconds } = probed.probe;
    const refused = recheckSource(
      pricedSource(job, item),
      { durationSeconds, width: video.width, height: video.height },
      { maxDurationSeconds: this.config.maxDurationSeconds },
    );
    if (refused) return refused;
    const spec = storedSpec(job);
    if (spec.api === 'sdr2hdr' && spec.package === 'hls') return this.splitPackage(command, probed.probe);
    const keyframes = await this.runner.keyframes(inputPath, video.index, run);
    if (!keyframes) return null;
    const plan = planSegments(keyframes, durationSeconds, this.config.segmentSeconds);
    if (plan.length < 2) return null;
    // Cut a millisecond before each keyframe: the segment muxer cuts at the first keyframe at or after
    // the time, and ffprobe's 6-decimal time may round a keyframe's time up.
    const cuts = plan.slice(1).map((segment) => Math.max(0, segment.start - 0.001));
    const cut = await this.runner.split({
      ...run,
      inputPath,
      videoIndex: video.index,
      cuts,
      dir: join(workDir, 'parts'),
    });
    if (!cut.ok) return this.onePassInstead(command, cut, 'split failed; one pass');
    if (cut.parts.length !== plan.length) {
      this.logger.warn(
        { job_id: job.id, index: item.index, parts: cut.parts.length, planned: plan.length },
        'split made other parts than planned; one pass',
      );
      return null;
    }
    const prefix = segmentsPrefix(job.id, item.index);
    let audio: NewSegment['audio'] = null;
    const audioPath = join(workDir, 'audio.mov');
    if (audioStream) {
      const copied = await this.runner.extractAudio({
        ...run,
        inputPath,
        audioIndex: audioStream.index,
        outputPath: audioPath,
      });
      if (!copied.ok) return this.onePassInstead(command, copied, 'audio copy failed; one pass');
      audio = { key: `${prefix}audio.mov`, codec: audioStream.codec };
    }
    const segments: NewSegment[] = plan.map((segment, n) => ({
      segment: n,
      startSeconds: segment.start,
      durationSeconds: segment.duration,
      sourceKey: `${prefix}src-${n}.mp4`,
      audio,
    }));
    try {
      // A few at a time: a long video has many parts, and each store holds its part (or a multipart
      // upload's buffers) in memory; every store has settled before a failure removes the segments.
      await inTurns(segments, SEGMENT_STORES_AT_ONCE, (segment, n) =>
        this.storage.writeFile(segment.sourceKey, cut.parts[n]),
      );
      if (audio) await this.storage.writeFile(audio.key, audioPath);
    } catch (error) {
      await this.files.remove(job.id, item.index);
      if (!(error instanceof StorageUnavailableError)) throw error;
      return { ok: false, code: 'upstream_error', message: STORE_FAILED };
    }
    await this.segments.record(job.id, item.index, segments);
    this.logger.log({ job_id: job.id, index: item.index, segments: segments.length }, 'item split into segments');
    return { segments: segments.map((segment) => segment.segment) };
  }

  /**
   * A package item (src/media/hls/package-parts.ts): units of whole HLS segments cut on frames, so nothing
   * is cut here — the source is stored once and each unit decodes its own range of it (its audio too is
   * encoded once, by the join). One unit: one pass.
   */
  private async splitPackage(command: SplitItemCommand, probe: ProbeResult): Promise<ItemSplit | MediaFailure | null> {
    const { job, item, inputPath } = command;
    const spec = storedSpec(job);
    if (spec.api !== 'sdr2hdr' || !spec.ladder || !probe.video) return null;
    const plan = planPackageUnits(
      probe.durationSeconds,
      probe.video.fps,
      spec.ladder.segmentSeconds,
      this.config.segmentSeconds,
    );
    if (plan.length < 2) return null;
    const sourceKey = `${segmentsPrefix(job.id, item.index)}source`;
    // A copy: the local store moves what it is given, and the input may be the customer's stored upload itself.
    const copy = join(command.workDir, 'source-copy');
    try {
      await copyFile(inputPath, copy);
      await this.storage.writeFile(sourceKey, copy);
    } catch (error) {
      await this.files.remove(job.id, item.index);
      if (!(error instanceof StorageUnavailableError)) throw error;
      return { ok: false, code: 'upstream_error', message: STORE_FAILED };
    }
    const segments: NewSegment[] = plan.map((unit, n) => ({
      segment: n,
      startSeconds: unit.start,
      durationSeconds: unit.duration,
      sourceKey,
      audio: null,
    }));
    await this.segments.record(job.id, item.index, segments);
    this.logger.log({ job_id: job.id, index: item.index, units: segments.length }, 'package item split into units');
    return { segments: segments.map((segment) => segment.segment) };
  }

  /** A media tool of the split failed: cancelled, the item stops; otherwise it runs in one pass. */
  private onePassInstead(command: SplitItemCommand, failure: ToolFailure, why: string): MediaFailure | null {
    if (command.signal.aborted) return { ok: false, code: 'processing_failed' };
    this.logger.warn({ job_id: command.job.id, index: command.item.index, stderr: failure.stderrTail }, why);
    return null;
  }
}
