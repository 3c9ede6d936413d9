// An item's input, made ready in its work folder: the upload fetched from storage (a short outage of
// the object store ridden out) or the source URL downloaded, then the checks only its bytes allow.
import { Inject, Injectable } from '@nestjs/common';
import { join } from 'node:path';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { downloadToFile } from '../common/net/pinned-fetch';
import { STORAGE, StorageUnavailableError, type Storage } from '../common/storage/storage';
import type { JobItemRow } from '../jobs/job.types';
import type { ItemClock } from './item-timings';
import { STORE_FAILED } from './item-ending';
import type { MediaFailure } from './media-runner';
import { OUTAGE_POLICIES, retryThroughOutage, type OutagePolicies } from './outage-retry';
import { ProcessingRepository } from './processing.repository';
import { pixelBudgetProblem } from '../media/pixel-budget';

export type ItemInputResult = { ok: true; path: string } | MediaFailure;

/** The window a source_url download's rate is judged over (SOURCE_MIN_BYTES_PER_SECOND). */
export const SOURCE_RATE_WINDOW_MS = 30_000;

/** What bounds the fetch of an item's input. */
export interface InputBounds {
  /** A cancel of the job. */
  signal: AbortSignal;
  /**
   * The worker's stop: a source download (which may take up to the job's time limit) is stopped, and
   * its reason (WorkerStopping) thrown hands the unit back to the queue. A fetch from our own store ends.
   */
  stopping: AbortSignal;
  /** The time the job has left: a download still running then ends the item as `timeout`. */
  timeLimitMs: number;
}

@Injectable()
export class ItemInput {
  constructor(
    private readonly repository: ProcessingRepository,
    @Inject(STORAGE) private readonly storage: Storage,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(OUTAGE_POLICIES) private readonly outages: OutagePolicies,
  ) {}

  /** The input's local path, or why the item cannot run (before any media tool has started). */
  async prepare(item: JobItemRow, workDir: string, bounds: InputBounds, clock: ItemClock): Promise<ItemInputResult> {
    const overBudget = pixelBudgetProblem(item.width, item.height, this.config.workerMaxPixels);
    if (overBudget) return { ok: false, code: overBudget.code, message: overBudget.message };
    const input = await clock.time('input', () => this.fetch(item, join(workDir, `in-${item.index}`), bounds));
    if (!input.ok) return input;
    // The block list is checked on the bytes themselves: a source_url's are known only now.
    if (await clock.time('check', () => this.repository.isBlocked(input.sha256))) {
      return {
        ok: false,
        code: 'content_policy_violation',
        message: 'This input is not allowed by the usage policy. It was not processed and you were not charged.',
      };
    }
    return { ok: true, path: input.path };
  }

  private async fetch(
    item: JobItemRow,
    path: string,
    { signal, stopping, timeLimitMs }: InputBounds,
  ): Promise<{ ok: true; path: string; sha256: string } | MediaFailure> {
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
        const local = await retryThroughOutage(
          () => this.storage.localFile(upload.storage_key, path, signal),
          this.outages.store,
          {
            signal,
          },
        );
        return local ? { ok: true, path: local, sha256: upload.sha256 } : deleted;
      } catch (error) {
        if (error instanceof StorageUnavailableError)
          return { ok: false, code: 'upstream_error', message: STORE_FAILED };
        throw error;
      }
    }
    const downloaded = await downloadToFile(item.source.url, path, {
      allow: this.config.allowPrivateUrls,
      maxBytes: this.config.maxSourceBytes,
      timeoutMs: Math.min(this.config.jobTimeLimitSeconds * 1000, 30 * 60 * 1000),
      // A source that keeps sending a little never falls idle: the job's time bounds the whole download.
      totalMs: Math.max(1, timeLimitMs),
      minRate: { bytesPerSecond: this.config.sourceMinBytesPerSecond, windowMs: SOURCE_RATE_WINDOW_MS },
      signal: AbortSignal.any([signal, stopping]),
    });
    if (!downloaded.ok && downloaded.code === 'timeout') {
      const message = `The job did not finish within its time limit of ${this.config.jobTimeLimitSeconds} s: the source download was still running.`;
      return { ok: false, code: 'timeout', message };
    }
    // invalid_url: the source is gone or refused now; upstream_error: the host failed or sent too slowly (retryable).
    if (!downloaded.ok) return { ok: false, code: downloaded.code, message: downloaded.reason };
    return { ok: true, path, sha256: downloaded.sha256 };
  }
}
