import { Inject, Injectable, Logger } from '@nestjs/common';
import { rm } from 'node:fs/promises';
import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { isUnavailableError } from '../common/errors/classify';
import { randomBase62 } from '../common/ids';
import { downloadToFile } from '../common/net/pinned-fetch';
import { outputKey, STORAGE, StorageUnavailableError, type Storage } from '../common/storage/storage';
import { JobLifecycle, type EndedItem, type ItemsEnded } from '../jobs/job-lifecycle';
import type { JobItemRow, JobRow } from '../jobs/job.types';
import { outputHeight, storedOutput } from '../jobs/output-options';
import { mediaRun } from '../metrics/job-metrics';
import { MEDIA_RUNNER, type MediaRunner, type RunItemRequest, type RunItemResult } from './media-runner';
import { ProcessingRepository } from './processing.repository';
import { planItem, planJobEnd, type ItemResult } from './settlement';
import { retryWhileUnavailable } from './store-retry';
import { recheckSource, type ActualSource, type PricedSource } from './source-recheck';
import { WorkDirs } from './work-dirs';

const PROGRESS_INTERVAL_MS = 1000;
/** How long a finished item's result waits for PostgreSQL to come back before the attempt is given up. */
const END_RETRY_MS = 5 * 60_000;
const END_RETRY_EVERY_MS = 2000;
const STORE_FAILED = 'The object store did not answer; the item may be retried.';

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
  ): Promise<void> {
    const taken = await this.lifecycle.takeItem(jobId, index, worker);
    if (!taken) return;
    const { job, item } = taken;
    // The job's first take (attempts counts takes of its items) is its start; none of its items has ended yet.
    if (job.attempts === 1) {
      const items = (await this.repository.openItems(jobId)).length;
      this.logger.log(
        { job_id: job.id, request_id: job.request_id, api: job.api, region: job.region, items },
        'job started',
      );
    }
    const deadline = (job.started_at?.getTime() ?? Date.now()) + this.config.jobTimeLimitSeconds * 1000;
    const workDir = await this.workDirs.create(`${jobId}-${index}`);
    let produced: ProducedOutput | null = null;
    try {
      const reportProgress = this.progressReporter(jobId, index, abort);
      const result = await this.runItem(job, item, workDir, deadline, signal, reportProgress);
      // Cancelled: the API already ended the job and released its hold; nothing to store.
      if (signal.aborted) {
        this.logger.log(
          { job_id: job.id, request_id: job.request_id, item: index },
          'item stopped: the job was cancelled',
        );
        return;
      }
      let itemResult: ItemResult;
      if (!result.ok) {
        itemResult = { index: item.index, ok: false, code: result.code, message: result.message };
      } else {
        const stored = await this.storeOutput(job, item, result, workDir);
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
      const { itemsEnded } = await this.whileUnavailable(jobId, () =>
        this.endItems(job, [item], [itemResult], produced),
      );
      // Ended meanwhile (cancelled, or a duplicate of this unit ended the item first): drop the output.
      if (produced && !itemsEnded.includes(item.index)) await this.storage.remove(produced.storageKey);
    } finally {
      await rm(workDir, { recursive: true, force: true });
    }
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
  ): Promise<RunItemResult> {
    if (item.width && item.height && item.width * item.height > this.config.workerMaxPixels) {
      return {
        ok: false,
        code: 'out_of_memory',
        message: `The input (${item.width}×${item.height}) exceeds the workers' pixel budget.`,
      };
    }
    const input = await this.resolveInput(item, workDir, signal);
    if (!input.ok) return input;
    // The block list is checked on the bytes themselves: a source_url's are known only now.
    if (await this.repository.isBlocked(input.sha256)) {
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
    const output = storedOutput(job);
    const priced: PricedSource = {
      api: job.api,
      sourceType: item.source.type,
      resolution: output.api === 'sdr2hdr' ? output.output.resolution : undefined,
      estimatedCredits: Number(item.estimated_credits),
      height: item.height,
    };
    const common = {
      inputPath: input.path,
      outputPath: join(workDir, `out-${item.index}`),
      signal,
      timeLimitMs,
      onProgress,
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
      const stored = await retryWhileUnavailable(() =>
        this.storage.write(storageKey, createReadStream(localPath), Number.MAX_SAFE_INTEGER),
      );
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
