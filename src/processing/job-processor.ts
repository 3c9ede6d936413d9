import { Inject, Injectable, Logger } from '@nestjs/common';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { isUnavailableError } from '../common/errors/classify';
import { inTurns } from '../common/in-turns';
import { randomBase62 } from '../common/ids';
import { downloadToFile } from '../common/net/pinned-fetch';
import { outputKey, segmentsPrefix, STORAGE, StorageUnavailableError, type Storage } from '../common/storage/storage';
import { JobLifecycle, type EndedItem, type ItemsEnded } from '../jobs/job-lifecycle';
import type { JobItemRow, JobRow } from '../jobs/job.types';
import { outputHeight, storedOutput } from '../jobs/output-options';
import { convertSdrToHdr, readOutputLight } from '../media/pipelines';
import { probeMedia } from '../media/probe';
import { QUALITY_PRESETS } from '../media/quality-presets';
import {
  extractAudio,
  joinParts,
  planSegments,
  probeKeyframes,
  splitsIntoSegments,
  splitVideo,
} from '../media/segments';
import { mediaRun } from '../metrics/job-metrics';
import { CONTENT_TYPES, sdr2hdrMedia } from './ffmpeg-media-runner';
import { MEDIA_RUNNER, type MediaRunner, type RunItemRequest, type RunItemResult } from './media-runner';
import { ProcessingRepository } from './processing.repository';
import { SegmentsRepository, type NewSegment } from './segments.repository';
import { planItem, planJobEnd, type ItemResult } from './settlement';
import { retryWhileUnavailable } from './store-retry';
import { recheckSource, type ActualSource, type PricedSource } from './source-recheck';
import { ItemClock } from './item-timings';
import { WorkDirs } from './work-dirs';

const PROGRESS_INTERVAL_MS = 1000;
/** How long a finished item's result waits for PostgreSQL to come back before the attempt is given up. */
const END_RETRY_MS = 5 * 60_000;
const END_RETRY_EVERY_MS = 2000;
const STORE_FAILED = 'The object store did not answer; the item may be retried.';
/**
 * Segment parts stored at once after a split: a part of up to 64 MiB goes to S3 in one PUT held in
 * memory (Storage.writeFile), so this bounds the split's memory, whatever the video's length.
 */
const SEGMENT_STORES_AT_ONCE = 2;

/** An item split into segments (each to be queued as a process-segment unit); its unit is done. */
export interface ItemSplit {
  segments: number[];
}

interface ProducedOutput {
  result: Extract<RunItemResult, { ok: true }>;
  storageKey: string;
  sizeBytes: number;
}

/**
 * Runs one item of a job in a worker: take it, process it, then end it through the job lifecycle
 * (one transaction: the item's result and output asset; when it was the job's last open item, also
 * the job's status, settle or release, outbox event). Safe to run again after a crash or twice at
 * once: an item or job that already ended is skipped, and money moves at most once.
 */
@Injectable()
export class JobProcessor {
  private readonly logger = new Logger(JobProcessor.name);

  constructor(
    private readonly repository: ProcessingRepository,
    private readonly segments: SegmentsRepository,
    private readonly lifecycle: JobLifecycle,
    @Inject(MEDIA_RUNNER) private readonly runner: MediaRunner,
    @Inject(STORAGE) private readonly storage: Storage,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly workDirs: WorkDirs,
  ) {}

  /** The indexes of a job's items still to run; none once the job has ended. */
  openItems(jobId: string): Promise<number[]> {
    return this.repository.openItems(jobId);
  }

  /**
   * `abort` is called when the job turns out to be no longer processing at a progress mark (a
   * cancel whose signal this worker missed); the caller aborts `signal` then.
   */
  async processItem(
    jobId: string,
    index: number,
    worker: string,
    signal: AbortSignal,
    abort: () => void,
  ): Promise<ItemSplit | null> {
    const clock = new ItemClock();
    const taken = await clock.time('claim', () => this.lifecycle.takeItem(jobId, index, worker));
    if (!taken) return null;
    const { job, item } = taken;
    // The job's first take (attempts counts takes of its items) is its start; none of its items has ended yet.
    if (job.attempts === 1) {
      const items = (await clock.time('claim', () => this.repository.openItems(jobId))).length;
      this.logger.log(
        { job_id: job.id, request_id: job.request_id, api: job.api, region: job.region, items },
        'job started',
      );
    }
    if (this.splits(job, item)) {
      // Split already (this unit ran before, or the reconciler queued the item again): queue the
      // segments not yet encoded again (a no-op for those waiting or running); none left: the last
      // one's unit joins them.
      const recorded = await this.segments.list(jobId, index);
      if (recorded.length) {
        const open = recorded.filter((segment) => segment.status !== 'succeeded').map((segment) => segment.segment);
        return { segments: open.length ? open : [recorded[recorded.length - 1].segment] };
      }
    }
    const deadline = (job.started_at?.getTime() ?? Date.now()) + this.config.jobTimeLimitSeconds * 1000;
    const workDir = await this.workDirs.create(`${jobId}-${index}`);
    let produced: ProducedOutput | null = null;
    let outcome: 'succeeded' | 'failed' | 'cancelled' | 'split' | 'ended_elsewhere' | 'error' = 'error';
    try {
      const reportProgress = this.progressReporter(jobId, index, abort);
      const result = await this.runItem(job, item, workDir, deadline, signal, reportProgress, clock);
      if ('segments' in result) {
        outcome = 'split';
        return result;
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
      let itemResult: ItemResult;
      if (!result.ok) {
        itemResult = { index: item.index, ok: false, code: result.code, message: result.message };
      } else {
        const stored = await clock.time('store', () => this.storeOutput(job, item, result, workDir));
        if (!stored.ok) {
          itemResult = { index: item.index, ok: false, code: 'upstream_error', message: stored.message };
        } else {
          produced = { result, storageKey: stored.storageKey, sizeBytes: stored.sizeBytes };
          itemResult = {
            index: item.index,
            ok: true,
            processedSeconds: result.processedSeconds,
            outputHeight: result.outputHeight,
          };
        }
      }
      // The output is made: an outage now must not throw it away (the item would run again).
      const { itemsEnded } = await clock.time('end', () =>
        this.whileUnavailable(jobId, () => this.endItems(job, [item], [itemResult], produced)),
      );
      outcome = !itemsEnded.includes(item.index) ? 'ended_elsewhere' : itemResult.ok ? 'succeeded' : 'failed';
      // Ended meanwhile (cancelled, or a duplicate of this unit ended the item first): drop the output.
      if (produced && !itemsEnded.includes(item.index)) await this.storage.remove(produced.storageKey);
      return null;
    } finally {
      await clock.time('cleanup', () => rm(workDir, { recursive: true, force: true }));
      this.logTimings(job, index, outcome, clock, produced?.sizeBytes ?? null);
    }
  }

  /** One line per item run: where its time went (README "Performance" reads these). */
  private logTimings(job: JobRow, index: number, outcome: string, clock: ItemClock, outputBytes: number | null): void {
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

  /**
   * Ends items that cannot be processed at all (BullMQ gave up on them; all open items when
   * `indexes` is omitted): failed with `code`, and the job with them when they were its last.
   */
  async failItems(jobId: string, code: 'upstream_error' | 'processing_failed', indexes?: number[]): Promise<boolean> {
    const claimed = await this.lifecycle.claim(jobId);
    if (!claimed) return false;
    const { job, items } = claimed;
    const failing = items.filter(
      (item) => ['queued', 'processing'].includes(item.status) && (!indexes || indexes.includes(item.index)),
    );
    const { jobEnded } = await this.endItems(
      job,
      failing,
      failing.map((item) => ({ index: item.index, ok: false, code })),
      null,
    );
    return jobEnded;
  }

  private async runItem(
    job: JobRow,
    item: JobItemRow,
    workDir: string,
    deadline: number,
    signal: AbortSignal,
    onProgress: (fraction: number) => void,
    clock: ItemClock,
  ): Promise<RunItemResult | ItemSplit> {
    if (item.width && item.height && item.width * item.height > this.config.workerMaxPixels) {
      return {
        ok: false,
        code: 'out_of_memory',
        message: `The input (${item.width}×${item.height}) exceeds the workers' pixel budget.`,
      };
    }
    const input = await clock.time('input', () => this.resolveInput(item, workDir, signal));
    if (!input.ok) return input;
    // The block list is checked on the bytes themselves: a source_url's are known only now.
    if (await clock.time('check', () => this.repository.isBlocked(input.sha256))) {
      return {
        ok: false,
        code: 'content_policy_violation',
        message: 'This input is not allowed by the usage policy. It was not processed and you were not charged.',
      };
    }
    const timeLimitMs = deadline - Date.now();
    if (timeLimitMs <= 0) {
      // Reached here at a (re)start: e.g. a job whose worker kept being killed under it.
      return {
        ok: false,
        code: 'timeout',
        message: `The job did not finish within its time limit of ${this.config.jobTimeLimitSeconds} s.`,
      };
    }
    if (this.splits(job, item)) {
      const split = await this.split(job, item, input.path, workDir, signal, timeLimitMs);
      // null: not worth splitting after all (too few keyframes), or not splittable: one pass.
      if (split) return split;
    }
    const output = storedOutput(job);
    const priced = this.priced(job, item);
    const common = {
      inputPath: input.path,
      outputPath: join(workDir, `out-${item.index}`),
      signal,
      timeLimitMs,
      onProgress,
      onStage: (stage: 'probe' | 'encode', ms: number) => clock.add(stage, ms),
      admit: (actual: ActualSource) =>
        recheckSource(priced, actual, { maxDurationSeconds: this.config.maxDurationSeconds }),
    };
    const request: RunItemRequest =
      output.api === 'sdr2hdr'
        ? {
            ...common,
            ...output,
            targetHeight: item.height ? outputHeight(item.height, output.output.resolution) : undefined,
          }
        : { ...common, ...output };
    const started = performance.now();
    const result = await this.runner.run(request);
    if (result.ok)
      mediaRun(job.api, result.processedSeconds, (performance.now() - started) / 1000, result.outputHeight);
    return result;
  }

  private async resolveInput(
    item: JobItemRow,
    workDir: string,
    signal: AbortSignal,
  ): Promise<
    | { ok: true; path: string; sha256: string }
    | { ok: false; code: 'upstream_error' | 'invalid_url' | 'file_too_large' | 'processing_failed'; message?: string }
  > {
    if (item.source.type === 'upload') {
      const upload = await this.repository.storageKeyOfUpload(item.source.upload_id);
      const deleted = {
        ok: false,
        code: 'processing_failed',
        message: 'The upload was deleted before processing.',
      } as const;
      if (!upload) return deleted;
      try {
        // Only this worker's own temp folder: on S3 the input is downloaded into it.
        const path = await retryWhileUnavailable(
          () => this.storage.localFile(upload.storage_key, join(workDir, `in-${item.index}`), signal),
          { signal },
        );
        return path ? { ok: true, path, sha256: upload.sha256 } : deleted;
      } catch (error) {
        if (error instanceof StorageUnavailableError)
          return { ok: false, code: 'upstream_error', message: STORE_FAILED };
        throw error;
      }
    }
    const path = join(workDir, `in-${item.index}`);
    const downloaded = await downloadToFile(item.source.url, path, {
      allow: this.config.allowPrivateUrls,
      maxBytes: this.config.maxSourceBytes,
      timeoutMs: Math.min(this.config.jobTimeLimitSeconds * 1000, 30 * 60 * 1000),
      signal,
    });
    // invalid_url: the source is gone or refused now; upstream_error: the host failed (retryable).
    if (!downloaded.ok) return { ok: false, code: downloaded.code, message: downloaded.reason };
    return { ok: true, path, sha256: downloaded.sha256 };
  }

  /** What the submit checked and priced, for the worker's re-check of the bytes it actually has. */
  private priced(job: JobRow, item: JobItemRow): PricedSource {
    const output = storedOutput(job);
    return {
      api: job.api,
      sourceType: item.source.type,
      resolution: output.api === 'sdr2hdr' ? output.output.resolution : undefined,
      estimatedCredits: Number(item.estimated_credits),
      height: item.height,
    };
  }

  // --- segment-parallel sdr2hdr (SEGMENT_SECONDS) ------------------------------------------------------

  /** An sdr2hdr item at least twice SEGMENT_SECONDS long is encoded in segments (0 turns this off). */
  private splits(job: JobRow, item: JobItemRow): boolean {
    return splitsIntoSegments(job.api, Number(item.duration_seconds), this.config.segmentSeconds);
  }

  /**
   * Cuts the source's video at keyframes (no re-encode), stores the parts and the source's audio for
   * the join, and records the segments. Null: one pass after all (the probe's verdict is the runner's
   * to give, or the keyframes allow one segment only).
   */
  private async split(
    job: JobRow,
    item: JobItemRow,
    inputPath: string,
    workDir: string,
    signal: AbortSignal,
    timeLimitMs: number,
  ): Promise<RunItemResult | ItemSplit | null> {
    const tools = { signal, timeLimitMs, ffmpegPath: this.config.ffmpegPath, ffprobePath: this.config.ffprobePath };
    const probed = await probeMedia(inputPath, {
      api: 'sdr2hdr',
      ffprobePath: this.config.ffprobePath,
      maxPixels: this.config.workerMaxPixels,
      signal,
    });
    if (!probed.ok || !probed.probe.video || probed.probe.encrypted) return null;
    const refused = recheckSource(
      this.priced(job, item),
      { durationSeconds: probed.probe.durationSeconds, height: probed.probe.video.height },
      { maxDurationSeconds: this.config.maxDurationSeconds },
    );
    if (refused) return refused;
    const keyframes = await probeKeyframes(inputPath, probed.probe.video.index, tools);
    if (!keyframes) return null;
    const plan = planSegments(keyframes, probed.probe.durationSeconds, this.config.segmentSeconds);
    if (plan.length < 2) return null;
    const partsDir = join(workDir, 'parts');
    await mkdir(partsDir);
    // Cut a millisecond before each keyframe: the segment muxer cuts at the first keyframe at or after
    // the time, and ffprobe's 6-decimal time may round a keyframe's time up.
    const cut = await splitVideo(
      inputPath,
      probed.probe.video.index,
      plan.slice(1).map((segment) => Math.max(0, segment.start - 0.001)),
      join(partsDir, 'part-%04d.mp4'),
      tools,
    );
    if (!cut.ok) {
      if (signal.aborted) return { ok: false, code: 'processing_failed' };
      this.logger.warn({ job_id: job.id, index: item.index, stderr: cut.run.stderrTail }, 'split failed; one pass');
      return null;
    }
    const parts = (await readdir(partsDir)).filter((name) => name.endsWith('.mp4')).sort();
    if (parts.length !== plan.length) {
      this.logger.warn(
        { job_id: job.id, index: item.index, parts: parts.length, planned: plan.length },
        'split made other parts than planned; one pass',
      );
      return null;
    }
    const prefix = segmentsPrefix(job.id, item.index);
    let audio: NewSegment['audio'] = null;
    const audioStream = probed.probe.audio;
    if (audioStream) {
      const audioPath = join(workDir, 'audio.mov');
      const extracted = await extractAudio(inputPath, audioStream.index, audioPath, tools);
      if (!extracted.ok) {
        if (signal.aborted) return { ok: false, code: 'processing_failed' };
        this.logger.warn(
          { job_id: job.id, index: item.index, stderr: extracted.run.stderrTail },
          'audio copy failed; one pass',
        );
        return null;
      }
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
        this.storage.writeFile(segment.sourceKey, join(partsDir, parts[n])),
      );
      if (audio) await this.storage.writeFile(audio.key, join(workDir, 'audio.mov'));
    } catch (error) {
      await this.removeSegments(job.id, item.index);
      if (!(error instanceof StorageUnavailableError)) throw error;
      return { ok: false, code: 'upstream_error', message: STORE_FAILED };
    }
    await this.segments.record(job.id, item.index, segments);
    this.logger.log({ job_id: job.id, index: item.index, segments: segments.length }, 'item split into segments');
    return { segments: segments.map((segment) => segment.segment) };
  }

  /**
   * Encodes one segment exactly as a whole item would be (same settings, no audio) and stores the
   * part; the unit that ends the item's last segment joins them and ends the item. Safe to run again:
   * a segment that ended is not encoded twice, and a unit run again after its worker died while
   * joining joins. Infrastructure failures throw (BullMQ retries this segment alone).
   */
  async processSegment(
    jobId: string,
    index: number,
    segment: number,
    worker: string,
    signal: AbortSignal,
    abort: () => void,
  ): Promise<void> {
    const taken = await this.segments.takeSegment(jobId, index, segment, worker);
    if (!taken) {
      if (!(await this.segments.itemOpen(jobId, index))) {
        await this.removeSegments(jobId, index);
        return;
      }
      const all = await this.segments.list(jobId, index);
      if (all.length && all.every((part) => part.status === 'succeeded')) await this.joinItem(jobId, index, signal);
      return;
    }
    const opened = await this.openItem(jobId, index);
    if (!opened) return;
    const { job, item } = opened;
    const output = storedOutput(job);
    if (output.api !== 'sdr2hdr') throw new Error(`segment of a ${output.api} item`);
    const deadline = (job.started_at?.getTime() ?? Date.now()) + this.config.jobTimeLimitSeconds * 1000;
    const workDir = await this.workDirs.create(`${jobId}-${index}-s${segment}`);
    try {
      const source = await this.storage.localFile(taken.source_key, join(workDir, 'part.mp4'), signal);
      if (!source) throw new Error(`segment ${segment} of ${jobId}/${index}: its source part is gone`);
      const probed = await probeMedia(source, {
        api: 'sdr2hdr',
        ffprobePath: this.config.ffprobePath,
        maxPixels: this.config.workerMaxPixels,
        signal,
      });
      const timeLimitMs = deadline - Date.now();
      const encoded = join(workDir, 'enc.mp4');
      const result = !probed.ok
        ? ({
            ok: false,
            code: probed.code === 'timeout' ? 'processing_failed' : probed.code,
            message: probed.message,
          } as const)
        : timeLimitMs <= 0
          ? ({ ok: false, code: 'timeout', message: undefined } as const)
          : await convertSdrToHdr({
              input: source,
              output: encoded,
              container: 'mp4',
              probe: probed.probe,
              targetHeight: item.height ? outputHeight(item.height, output.output.resolution) : undefined,
              peakNits: output.output.peak_nits ?? undefined,
              mapping: output.output.mapping,
              transfer: output.output.transfer,
              ...QUALITY_PRESETS[output.output.quality],
              signal,
              timeLimitMs,
              ffmpegPath: this.config.ffmpegPath,
              onProgress: this.segmentProgress(jobId, index, segment, abort),
            });
      if (signal.aborted || !(await this.segments.itemOpen(jobId, index))) {
        // Cancelled (or the item ended otherwise): nothing to keep.
        await this.removeSegments(jobId, index);
        return;
      }
      if (!result.ok) {
        await this.segments.failSegment(jobId, index, segment);
        await this.endItems(job, [item], [{ index, ok: false, code: result.code, message: result.message }], null);
        await this.removeSegments(jobId, index);
        return;
      }
      const encodedKey = `${segmentsPrefix(jobId, index)}enc-${segment}.mp4`;
      // An outage throws: BullMQ runs this segment again.
      await this.storage.writeFile(encodedKey, encoded);
      const ended = await this.segments.endSegment(jobId, index, segment, {
        encodedKey,
        processedSeconds: result.processedSeconds,
      });
      if (ended === 'item_not_open') await this.removeSegments(jobId, index);
      else if (ended === 'last') await this.joinItem(jobId, index, signal);
    } finally {
      await rm(workDir, { recursive: true, force: true });
    }
  }

  /** Reads a processing job and one of its items (null when the job ended). */
  private async openItem(jobId: string, index: number): Promise<{ job: JobRow; item: JobItemRow } | null> {
    // processing → processing: the job's heartbeat, and its row with its items.
    const claimed = await this.lifecycle.claim(jobId);
    const item = claimed?.items.find((candidate) => candidate.index === index);
    return claimed && item ? { job: claimed.job, item } : null;
  }

  /**
   * Joins an item's encoded segments without re-encoding (concat demuxer), muxes the source's audio
   * once, stores the output and ends the item through the lifecycle, as a one-pass item would.
   */
  private async joinItem(jobId: string, index: number, signal: AbortSignal): Promise<void> {
    const opened = await this.openItem(jobId, index);
    if (!opened) return;
    const { job, item } = opened;
    const output = storedOutput(job);
    if (output.api !== 'sdr2hdr') throw new Error(`join of a ${output.api} item`);
    const container = output.output.container;
    const segments = await this.segments.list(jobId, index);
    const deadline = (job.started_at?.getTime() ?? Date.now()) + this.config.jobTimeLimitSeconds * 1000;
    const workDir = await this.workDirs.create(`${jobId}-${index}-join`);
    let produced: ProducedOutput | null = null;
    try {
      const parts: string[] = [];
      for (const segment of segments) {
        const part = segment.encoded_key
          ? await this.storage.localFile(segment.encoded_key, join(workDir, `enc-${segment.segment}.mp4`), signal)
          : null;
        if (!part) throw new Error(`segment ${segment.segment} of ${jobId}/${index}: its encoded part is gone`);
        parts.push(part);
      }
      const first = segments[0];
      let audio: { path: string; codec: string } | null = null;
      if (first.audio_key && first.audio_codec) {
        const path = await this.storage.localFile(first.audio_key, join(workDir, 'audio.mov'), signal);
        if (!path) throw new Error(`${jobId}/${index}: the source's audio is gone`);
        audio = { path, codec: first.audio_codec };
      }
      const joinedPath = join(workDir, `out-${index}.${container}`);
      const joined = await joinParts(parts, join(workDir, 'parts.txt'), audio, joinedPath, container, {
        signal,
        timeLimitMs: Math.max(1, deadline - Date.now()),
        ffmpegPath: this.config.ffmpegPath,
      });
      if (signal.aborted) return;
      let result: RunItemResult;
      if (!joined.ok) {
        this.logger.warn({ job_id: jobId, index, stderr: joined.run.stderrTail }, 'join failed');
        result = { ok: false, code: joined.run.status === 'timeout' ? 'timeout' : 'processing_failed' };
      } else {
        const probed = await probeMedia(joinedPath, {
          api: 'sdr2hdr',
          ffprobePath: this.config.ffprobePath,
          maxPixels: this.config.workerMaxPixels,
          signal,
        });
        if (!probed.ok || !probed.probe.video) throw new Error(`${jobId}/${index}: the joined output does not probe`);
        const { width, height } = probed.probe.video;
        result = {
          ok: true,
          processedSeconds: probed.probe.durationSeconds,
          outputHeight: height,
          container,
          contentType: CONTENT_TYPES[container],
          media: sdr2hdrMedia(
            width,
            height,
            output.output.quality,
            await readOutputLight(joinedPath, output.output.mapping, output.output.transfer),
          ),
        };
      }
      let itemResult: ItemResult;
      if (!result.ok) itemResult = { index, ok: false, code: result.code, message: result.message };
      else {
        const stored = await this.storeOutput(job, item, result, workDir);
        if (!stored.ok) itemResult = { index, ok: false, code: 'upstream_error', message: stored.message };
        else {
          produced = { result, storageKey: stored.storageKey, sizeBytes: stored.sizeBytes };
          itemResult = {
            index,
            ok: true,
            processedSeconds: result.processedSeconds,
            outputHeight: result.outputHeight,
          };
        }
      }
      const { itemsEnded } = await this.endItems(job, [item], [itemResult], produced);
      if (produced && !itemsEnded.includes(index)) await this.storage.remove(produced.storageKey);
      await this.removeSegments(jobId, index);
    } finally {
      await rm(workDir, { recursive: true, force: true });
    }
  }

  /** An item's temporary segments (source parts, encoded parts, audio): removed once it has ended. */
  async removeSegments(jobId: string, index: number): Promise<void> {
    const keys: string[] = [];
    for await (const entry of this.storage.list(segmentsPrefix(jobId, index))) keys.push(entry.key);
    await this.storage.removeMany(keys);
  }

  /** A segment's progress makes its item's (the sum of its segments') and the job's; aborts once the job ended. */
  private segmentProgress(
    jobId: string,
    index: number,
    segment: number,
    abort: () => void,
  ): (fraction: number) => void {
    let last = 0;
    return (fraction) => {
      const now = Date.now();
      if (now - last < PROGRESS_INTERVAL_MS && fraction < 1) return;
      last = now;
      const rounded = Math.round(Math.max(0, Math.min(1, fraction)) * 1000) / 1000;
      this.segments
        .progress(jobId, index, segment, rounded)
        .then((item) => this.lifecycle.reportProgress(jobId, index, Math.round(Math.min(0.999, item) * 1000) / 1000))
        .then(
          (processing) => {
            if (!processing) abort();
          },
          (error: unknown) =>
            this.logger.warn({ job_id: jobId, item: index, segment, err: error }, 'segment progress write failed'),
        );
    };
  }

  /** Puts an item's output in storage; an outage is the item's upstream_error (retryable), never a hang. */
  private async storeOutput(
    job: JobRow,
    item: JobItemRow,
    result: Extract<RunItemResult, { ok: true }>,
    workDir: string,
  ): Promise<{ ok: true; storageKey: string; sizeBytes: number } | { ok: false; message: string }> {
    const storageKey = outputKey(job.account_id, job.id, item.index, result.container, randomBase62(8));
    const localPath = join(workDir, `out-${item.index}.${result.container}`);
    try {
      // Moved, not copied, when the local backend's folder is on the same file system (see writeFile).
      const stored = await retryWhileUnavailable(() => this.storage.writeFile(storageKey, localPath));
      return { ok: true, storageKey, sizeBytes: stored.sizeBytes };
    } catch (error) {
      if (!(error instanceof StorageUnavailableError)) throw error;
      this.logger.warn({ job_id: job.id, index: item.index, err: error }, 'could not store an output');
      return { ok: false, message: STORE_FAILED };
    }
  }

  /** Marks progress at most once a second; aborts the item once its job is no longer processing. */
  /** `work`, tried again every few seconds while PostgreSQL or Redis is unreachable (up to END_RETRY_MS). */
  private async whileUnavailable<T>(jobId: string, work: () => Promise<T>): Promise<T> {
    const giveUpAt = Date.now() + END_RETRY_MS;
    for (;;) {
      try {
        return await work();
      } catch (error) {
        if (!isUnavailableError(error) || Date.now() > giveUpAt) throw error;
        this.logger.warn({ job_id: jobId, err: error }, 'dependency unavailable while ending an item; trying again');
        await new Promise((resolve) => setTimeout(resolve, END_RETRY_EVERY_MS));
      }
    }
  }

  private progressReporter(jobId: string, index: number, abort: () => void): (fraction: number) => void {
    let last = 0;
    return (fraction) => {
      const now = Date.now();
      if (now - last < PROGRESS_INTERVAL_MS && fraction < 1) return;
      last = now;
      const rounded = Math.round(Math.max(0, Math.min(1, fraction)) * 1000) / 1000;
      this.lifecycle.reportProgress(jobId, index, rounded).then(
        (processing) => {
          if (!processing) abort();
        },
        (error: unknown) => this.logger.warn({ job_id: jobId, item: index, err: error }, 'progress write failed'),
      );
    };
  }

  /**
   * Ends items with their results; what the job costs, once its last item ends, comes from settlement.ts.
   * The call that ends the job logs its one "job ended" line (ids, counts, status, code, credits; no secret).
   */
  private async endItems(
    job: JobRow,
    items: JobItemRow[],
    results: ItemResult[],
    produced: ProducedOutput | null,
  ): Promise<ItemsEnded> {
    const context = { api: job.api, requestId: job.request_id };
    const endings = items.map((item) => {
      const plan = planItem(
        context,
        { index: item.index, estimatedCredits: Number(item.estimated_credits) },
        results.find((result) => result.index === item.index),
        this.config.docsUrl,
      );
      return {
        index: item.index,
        status: plan.status,
        chargedCredits: plan.chargedCredits,
        processedSeconds: plan.processedSeconds,
        error: plan.error,
        asset:
          produced && plan.status === 'succeeded'
            ? {
                storageKey: produced.storageKey,
                sizeBytes: produced.sizeBytes,
                container: produced.result.container,
                contentType: produced.result.contentType,
                media: produced.result.media,
              }
            : null,
      };
    });
    let ending: ReturnType<typeof planJobEnd> | undefined;
    let endedItems: EndedItem[] = [];
    const outcome = await this.lifecycle.endItems(job, endings, (ended) => {
      endedItems = ended;
      ending = planJobEnd(context, ended, this.config.docsUrl);
      return ending;
    });
    if (outcome.jobEnded && ending) {
      this.logger.log(
        {
          job_id: job.id,
          request_id: job.request_id,
          api: job.api,
          items: endedItems.length,
          failed_items: endedItems.filter((item) => item.status === 'failed').length,
          status: ending.status,
          code: ending.error?.code ?? null,
          duration_ms: job.started_at ? Date.now() - job.started_at.getTime() : null,
          processed_seconds: ending.processedSeconds,
          held_credits: Number(job.estimated_credits),
          charged_credits: ending.chargedCredits,
        },
        'job ended',
      );
    }
    return outcome;
  }
}
