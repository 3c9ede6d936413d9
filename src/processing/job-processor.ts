import { Inject, Injectable, Logger } from '@nestjs/common';
import { mkdtemp, rm } from 'node:fs/promises';
import { createReadStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { downloadToFile } from '../common/net/pinned-fetch';
import { outputKey, STORAGE, StorageUnavailableError, type Storage } from '../common/storage/storage';
import { JobLifecycle } from '../jobs/job-lifecycle';
import type { JobItemRow, JobRow } from '../jobs/job.types';
import { outputHeight, storedOutput } from '../jobs/output-options';
import { mediaRun } from '../metrics/job-metrics';
import { MEDIA_RUNNER, type MediaRunner, type RunItemRequest, type RunItemResult } from './media-runner';
import { ProcessingRepository } from './processing.repository';
import { planSettlement, type ItemResult } from './settlement';

const PROGRESS_INTERVAL_MS = 1000;
const STORE_FAILED = 'The object store did not answer; the item may be retried.';

interface ProducedOutput {
  index: number;
  result: Extract<RunItemResult, { ok: true }>;
  storageKey: string;
  sizeBytes: number;
}

/**
 * Runs one job end to end in a worker: take it, process each item, then end it through the job
 * lifecycle (one transaction: item results, assets, settle or release, outbox event). Safe to run
 * again after a crash: a job that already ended is skipped and its money moves at most once.
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
  ) {}

  async process(jobId: string, signal: AbortSignal): Promise<void> {
    const claimed = await this.lifecycle.claim(jobId);
    if (!claimed) return;
    const { job, items } = claimed;
    const deadline = (job.started_at?.getTime() ?? Date.now()) + this.config.jobTimeLimitSeconds * 1000;
    const workDir = await mkdtemp(join(tmpdir(), `mediajobs-${jobId}-`));
    const results: ItemResult[] = [];
    const outputs: ProducedOutput[] = [];
    try {
      for (const item of items) {
        if (signal.aborted) break;
        await this.lifecycle.itemStarted(jobId, item.index);
        const reportProgress = this.progressReporter(jobId, item.index, items.length);
        const result = await this.runItem(job, item, workDir, deadline, signal, reportProgress);
        if (!result.ok) {
          results.push({ index: item.index, ok: false, code: result.code, message: result.message });
          continue;
        }
        const stored = await this.storeOutput(job, item, result, workDir);
        if (!stored.ok) {
          results.push({ index: item.index, ok: false, code: 'upstream_error', message: stored.message });
          continue;
        }
        outputs.push({ index: item.index, result, storageKey: stored.storageKey, sizeBytes: stored.sizeBytes });
        results.push({
          index: item.index,
          ok: true,
          processedSeconds: result.processedSeconds,
          outputHeight: result.outputHeight,
        });
      }
      if (signal.aborted) {
        // Cancelled: the API already ended the job and released its hold; drop what we made.
        await this.removeOutputs(outputs);
        return;
      }
      const ended = await this.finish(job, items, results, outputs);
      if (!ended) await this.removeOutputs(outputs);
    } finally {
      await rm(workDir, { recursive: true, force: true });
    }
  }

  /** Ends a job that cannot be processed at all (BullMQ gave up on it): failed, hold released. */
  async failWhole(jobId: string, code: 'upstream_error' | 'processing_failed'): Promise<boolean> {
    const claimed = await this.lifecycle.claim(jobId);
    if (!claimed) return false;
    const { job, items } = claimed;
    return this.finish(
      job,
      items,
      items.map((item) => ({ index: item.index, ok: false, code })),
      [],
    );
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
    const timeLimitMs = deadline - Date.now();
    if (timeLimitMs <= 0) return { ok: false, code: 'timeout' };
    const common = {
      inputPath: input.path,
      outputPath: join(workDir, `out-${item.index}`),
      signal,
      timeLimitMs,
      onProgress,
    };
    const output = storedOutput(job);
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
    | { ok: true; path: string }
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
        const path = await this.storage.localFile(upload.storage_key, join(workDir, `in-${item.index}`), signal);
        return path ? { ok: true, path } : deleted;
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
    return { ok: true, path };
  }

  /** Puts an item's output in storage; an outage is the item's upstream_error (retryable), never a hang. */
  private async storeOutput(
    job: JobRow,
    item: JobItemRow,
    result: Extract<RunItemResult, { ok: true }>,
    workDir: string,
  ): Promise<{ ok: true; storageKey: string; sizeBytes: number } | { ok: false; message: string }> {
    const storageKey = outputKey(job.account_id, job.id, item.index, result.container);
    const localPath = join(workDir, `out-${item.index}.${result.container}`);
    try {
      const stored = await this.storage.write(storageKey, createReadStream(localPath), Number.MAX_SAFE_INTEGER);
      return { ok: true, storageKey, sizeBytes: stored.sizeBytes };
    } catch (error) {
      if (!(error instanceof StorageUnavailableError)) throw error;
      this.logger.warn({ job_id: job.id, index: item.index, err: error }, 'could not store an output');
      return { ok: false, message: STORE_FAILED };
    }
  }

  private progressReporter(jobId: string, index: number, count: number): (fraction: number) => void {
    let last = 0;
    return (fraction) => {
      const now = Date.now();
      if (now - last < PROGRESS_INTERVAL_MS && fraction < 1) return;
      last = now;
      const overall = Math.min(0.999, (index + Math.max(0, Math.min(1, fraction))) / count);
      this.lifecycle.reportProgress(jobId, Math.round(overall * 1000) / 1000).catch((error: unknown) => {
        this.logger.warn({ job_id: jobId, err: error }, 'progress write failed');
      });
    };
  }

  /** Ends the job with its items' results: what it costs comes from planSettlement (API.md §4). */
  private finish(job: JobRow, items: JobItemRow[], results: ItemResult[], outputs: ProducedOutput[]): Promise<boolean> {
    const plan = planSettlement(
      { api: job.api, requestId: job.request_id },
      items.map((item) => ({ index: item.index, estimatedCredits: Number(item.estimated_credits) })),
      results,
      this.config.docsUrl,
    );
    return this.lifecycle.end(job, {
      status: plan.status,
      chargedCredits: plan.chargedCredits,
      processedSeconds: plan.processedSeconds,
      error: plan.error,
      items: plan.items.map((item) => {
        const produced = outputs.find((output) => output.index === item.index);
        return {
          index: item.index,
          status: item.status,
          chargedCredits: item.chargedCredits,
          processedSeconds: item.processedSeconds,
          error: item.error,
          asset: produced
            ? {
                storageKey: produced.storageKey,
                sizeBytes: produced.sizeBytes,
                container: produced.result.container,
                contentType: produced.result.contentType,
                media: produced.result.media,
              }
            : null,
        };
      }),
    });
  }

  private async removeOutputs(outputs: ProducedOutput[]): Promise<void> {
    await Promise.all(outputs.map((output) => this.storage.remove(output.storageKey)));
  }
}
