// The one way an item ends in a worker, whichever use case ran it (one pass, a failed segment, the
// join, or the queue giving up): its output stored, then the item, its asset and — with its job's
// last item — the job's status, settlement and outbox event ended through the job lifecycle in one
// transaction. Before it is stored, an output is measured from the file itself and checked
// (MediaRunner.check, src/media/output-checks.ts): one that fails a check is not stored and its item
// fails `output_check_failed`, charged 0 in the same settlement — verified or free. An outage of
// PostgreSQL or Redis at that moment is waited out: the work is done, and throwing it away would run
// the item again.
import { Inject, Injectable, Logger } from '@nestjs/common';
import { readdir } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { randomBase62 } from '../common/ids';
import {
  outputKey,
  packagePrefix,
  removeStoredOutputs,
  STORAGE,
  StorageUnavailableError,
  type Storage,
} from '../common/storage/storage';
import { JobLifecycle, type ItemEnding as LifecycleEnding, type ItemsEnded } from '../jobs/job-lifecycle';
import { openItemStatuses } from '../jobs/job-lifecycle';
import type { ItemCheck, JobItemRow, JobRow } from '../jobs/job.types';
import { storedSpec } from '../jobs/output-options';
import { planItem, type ItemResult } from '../jobs/settlement';
import type { ItemClock } from './item-timings';
import { MEDIA_RUNNER, type MadeOutput, type MediaRun, type MediaRunner, type RunItemResult } from './media-runner';
import { OUTAGE_POLICIES, retryThroughOutage, type OutagePolicies } from './outage-retry';

export const STORE_FAILED = 'The object store did not answer; the item may be retried.';

type Asset = NonNullable<LifecycleEnding['asset']>;

/** How an item's ending went: ended here (succeeded or failed), or found ended elsewhere (its output dropped). */
export interface ItemEnded {
  outcome: 'succeeded' | 'failed' | 'ended_elsewhere';
  /** The size of the output this ending stored (null: none). */
  outputBytes: number | null;
}

/** What a made output is checked against: its source (one file, or a split item's parts in order). */
export interface OutputSource extends MediaRun {
  sourcePaths: string[];
}

/** A made output after its checks: what to store (the measured media), or why the item fails. */
type Verified =
  | { ok: true; output: MadeOutput; checks: ItemCheck[] }
  | { ok: false; result: Extract<ItemResult, { ok: false }>; checks?: ItemCheck[] };

@Injectable()
export class ItemEnding {
  private readonly logger = new Logger(ItemEnding.name);

  constructor(
    private readonly lifecycle: JobLifecycle,
    @Inject(STORAGE) private readonly storage: Storage,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(OUTAGE_POLICIES) private readonly outages: OutagePolicies,
    @Inject(MEDIA_RUNNER) private readonly runner: MediaRunner,
  ) {}

  /**
   * Ends one item with what its run made. An output is stored first (the object store's outage is
   * the item's upstream_error, retryable), and dropped again when the item turns out to have ended
   * elsewhere meanwhile (cancelled, or a duplicate unit ended it first). `clock` times the stages.
   */
  async end(
    job: JobRow,
    item: JobItemRow,
    result: RunItemResult,
    source: OutputSource,
    clock?: ItemClock,
  ): Promise<ItemEnded> {
    const timed = <T>(stage: 'verify' | 'store' | 'end', work: () => Promise<T>) =>
      clock ? clock.time(stage, work) : work();
    const verified: Verified | null = result.ok
      ? await timed('verify', () => this.verify(job, item.index, result, source))
      : null;
    const made = verified?.ok ? verified.output : null;
    const asset = made ? await timed('store', () => this.store(job, item.index, made)) : null;
    const itemResult: ItemResult = !result.ok
      ? { index: item.index, ok: false, code: result.code, message: result.message }
      : verified && !verified.ok
        ? verified.result
        : !asset
          ? { index: item.index, ok: false, code: 'upstream_error', message: STORE_FAILED }
          : {
              index: item.index,
              ok: true,
              processedSeconds: result.processedSeconds,
              outputPixels: result.outputWidth * result.outputHeight,
              ...(result.package
                ? { rungs: result.package.renditions.map(({ rung }) => ({ width: rung.width, height: rung.height })) }
                : {}),
            };
    const checks = verified?.checks;
    const { itemsEnded } = await timed('end', () =>
      retryThroughOutage(() => this.endItems(job, [item], [itemResult], asset, checks), this.outages.dependency, {
        onRetry: (error) =>
          this.logger.warn(
            { job_id: job.id, item: item.index, err: error },
            'dependency unavailable while ending an item; trying again',
          ),
      }),
    );
    if (!itemsEnded.includes(item.index)) {
      if (asset)
        await removeStoredOutputs(this.storage, [
          asset.storageKey,
          ...(asset.lightMap ? [asset.lightMap.storageKey] : []),
        ]);
      return { outcome: 'ended_elsewhere', outputBytes: asset?.sizeBytes ?? null };
    }
    return { outcome: itemResult.ok ? 'succeeded' : 'failed', outputBytes: asset?.sizeBytes ?? null };
  }

  /**
   * Ends items that cannot be processed at all (the queue gave up on them; all open items when
   * `indexes` is omitted): failed with `code`, and the job with them when they were its last.
   * Whether the job ended.
   */
  async fail(jobId: string, code: 'upstream_error' | 'processing_failed', indexes?: number[]): Promise<boolean> {
    const claimed = await this.lifecycle.claim(jobId);
    if (!claimed) return false;
    const open = openItemStatuses();
    const failing = claimed.items.filter(
      (item) => open.includes(item.status) && (!indexes || indexes.includes(item.index)),
    );
    const results = failing.map((item): ItemResult => ({ index: item.index, ok: false, code }));
    const { jobEnded } = await this.endItems(claimed.job, failing, results, null);
    return jobEnded;
  }

  /**
   * Measures the output from the file and runs its checks through the media runner. The first failed
   * check fails the item (`output_check_failed`, its details the check, expected and measured); a
   * measurement stopped by the job's cancel or time limit ends the item with that code.
   */
  private async verify(job: JobRow, index: number, made: MadeOutput, source: OutputSource): Promise<Verified> {
    const ordered = storedSpec(job);
    const checked = await this.runner.check(
      ordered.api === 'sdr2hdr'
        ? { ...source, output: made, api: 'sdr2hdr', options: ordered }
        : { ...source, output: made, api: 'audio', options: ordered },
    );
    if (!checked.ok) return { ok: false, result: { index, ok: false, code: checked.code, message: checked.message } };
    const failed = checked.checks.find((check) => !check.passed);
    if (!failed) return { ok: true, output: { ...made, media: checked.measured }, checks: checked.checks };
    this.logger.warn({ job_id: job.id, item: index, check: failed }, 'an output failed its check');
    const { name: check, expected, measured } = failed;
    const message = `The output failed its ${check} check: expected ${expected}, measured ${String(measured)}. The item was not charged.`;
    return {
      ok: false,
      result: { index, ok: false, code: 'output_check_failed', message, details: { check, expected, measured } },
      checks: checked.checks,
    };
  }

  /**
   * Puts an output (and its light map, under the same run's key with .png) into storage; null when the
   * object store stayed down for the output. A light map the store refused is left out, the output kept.
   */
  private async store(job: JobRow, index: number, output: MadeOutput): Promise<Asset | null> {
    const run = randomBase62(8);
    const storageKey = output.package
      ? packagePrefix(job.account_id, job.id, index, run)
      : outputKey(job.account_id, job.id, index, output.container, run);
    // Moved, not copied, when the local backend's folder is on the same file system (see writeFile).
    const write = (key: string, path: string) =>
      retryThroughOutage(() => this.storage.writeFile(key, path), this.outages.store);
    try {
      const stored = output.package
        ? await storePackage(storageKey, output.path, write).catch(async (error: unknown) => {
            await removeStoredOutputs(this.storage, [storageKey]).catch(() => undefined);
            throw error;
          })
        : await write(storageKey, output.path);
      const { container, contentType, media } = output;
      const lightMap = output.lightMapPath
        ? await this.storeLightMap(job, index, run, output.lightMapPath, output.lightMapFrameSeconds ?? null, write)
        : null;
      return { storageKey, sizeBytes: stored.sizeBytes, container, contentType, media, lightMap };
    } catch (error) {
      if (!(error instanceof StorageUnavailableError)) throw error;
      this.logger.warn({ job_id: job.id, index, err: error }, 'could not store an output');
      return null;
    }
  }

  private async storeLightMap(
    job: JobRow,
    index: number,
    run: string,
    path: string,
    frameSeconds: number | null,
    write: (key: string, path: string) => Promise<{ sizeBytes: number }>,
  ): Promise<Asset['lightMap']> {
    const storageKey = outputKey(job.account_id, job.id, index, 'png', run);
    try {
      return { storageKey, sizeBytes: (await write(storageKey, path)).sizeBytes, frameSeconds };
    } catch (error) {
      if (!(error instanceof StorageUnavailableError)) throw error;
      this.logger.warn({ job_id: job.id, index, err: error }, 'could not store a light map');
      return null;
    }
  }

  /**
   * Ends items with their results; what the job costs, once its last item ends, JobLifecycle.endItems settles
   * (src/jobs/settlement.ts).
   * The call that ends the job logs its one "job ended" line (ids, counts, status, code, credits; no secret).
   */
  private async endItems(
    job: JobRow,
    items: JobItemRow[],
    results: ItemResult[],
    asset: Asset | null,
    checks?: ItemCheck[],
  ): Promise<ItemsEnded> {
    const context = { api: job.api, requestId: job.request_id };
    const endings = items.map((item): LifecycleEnding => {
      const plan = planItem(
        context,
        { index: item.index, estimatedCredits: Number(item.estimated_credits) },
        results.find((result) => result.index === item.index),
        this.config.docsUrl,
      );
      const { status, chargedCredits, processedSeconds, error } = plan;
      return {
        index: item.index,
        status,
        chargedCredits,
        processedSeconds,
        error,
        asset: status === 'succeeded' ? asset : null,
        checks,
      };
    });
    const outcome = await this.lifecycle.endItems(job, endings);
    const { ending } = outcome;
    if (ending) {
      this.logger.log(
        {
          job_id: job.id,
          request_id: job.request_id,
          api: job.api,
          items: ending.items.length,
          failed_items: ending.items.filter((item) => item.status === 'failed').length,
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

/** Uploads at once while storing a package's files: its many small objects, not one stream at a time. */
const PACKAGE_UPLOADS = 4;

/** Every file under a package's folder, stored under `prefix` with its relative path; their total size. */
async function storePackage(
  prefix: string,
  dir: string,
  write: (key: string, path: string) => Promise<{ sizeBytes: number }>,
): Promise<{ sizeBytes: number }> {
  const names = (await readdir(dir, { recursive: true, withFileTypes: true }))
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)));
  let sizeBytes = 0;
  let next = 0;
  const upload = async () => {
    while (next < names.length) {
      const name = names[next++];
      sizeBytes += (await write(`${prefix}${name.split(sep).join('/')}`, join(dir, name))).sizeBytes;
    }
  };
  await Promise.all(Array.from({ length: Math.min(PACKAGE_UPLOADS, names.length) }, upload));
  return { sizeBytes };
}
