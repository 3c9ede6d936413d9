import { Inject, Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { ApiError } from '../common/errors';
import { withPinnedProxy } from '../common/net/pinned-proxy';
import { REDIS, type RedisClient } from '../common/redis/redis.module';
import { STORAGE, StorageUnavailableError, type Storage } from '../common/storage/storage';
import type { JobInputDto } from './dto/submit-job.dto';
import type { ItemSource } from './job.types';
import type { JobApi } from './job.types';
import { checkMediaRules } from './media-rules';
import { ProbeSlots } from './probe-slots';
import { SOURCE_PROBE, type ProbeOutcome, type SourceProbe } from './source-probe';
import { UploadsRepository } from './uploads.repository';

/** An estimate's input that was described, not sent (`inputs[i].media`): priced, never stored. */
export interface DeclaredSource {
  type: 'declared';
}

export interface CheckedSource<Source = ItemSource> {
  source: Source;
  durationSeconds: number;
  width: number | null;
  height: number | null;
}

/** Probe results are cached so a burst of submits of one source probes it once. */
const PROBE_CACHE_SECONDS = 300;
const URL_PROBE_TIMEOUT_MS = 15_000;
const LOCAL_PROBE_TIMEOUT_MS = 10_000;
const STORED_PROBE_URL_SECONDS = 120;
/** Verdicts on uploaded bytes this instance keeps in memory as well (see `cached`). */
const LOCAL_VERDICTS = 1000;

/**
 * Source checks at submit (docs/api-decisions.md §2 step 7): the URL is safe and reachable, the media is a
 * container and codec we accept, decodable, not too long, and not on the block list.
 */
@Injectable()
export class SourcesService {
  /**
   * Verdicts on uploads (keyed by their bytes' sha256, so they cannot change) read or made here within
   * PROBE_CACHE_SECONDS: a client submitting one upload again and again costs no Redis read for it.
   * URLs are not kept: what a URL serves can change, and Redis is the one place its verdict expires.
   */
  private readonly verdicts = new Map<string, { outcome: ProbeOutcome; until: number }>();

  constructor(
    private readonly uploads: UploadsRepository,
    @Inject(SOURCE_PROBE) private readonly prober: SourceProbe,
    private readonly slots: ProbeSlots,
    @Inject(STORAGE) private readonly storage: Storage,
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** `signal`: the client went away; a probe still running for it is killed (asked for only to probe). */
  async check(
    accountId: string,
    api: JobApi,
    input: JobInputDto,
    index: number,
    signal?: () => AbortSignal,
  ): Promise<CheckedSource> {
    if (input.upload_id !== undefined)
      return this.checkUpload(accountId, api, input.upload_id, `inputs[${index}].upload_id`, signal);
    return this.checkUrl(accountId, api, input.source_url!, `inputs[${index}].source_url`, signal);
  }

  private async checkUpload(
    accountId: string,
    api: JobApi,
    uploadId: string,
    param: string,
    signal?: () => AbortSignal,
  ): Promise<CheckedSource> {
    const upload = await this.uploads.find(accountId, uploadId);
    if (!upload)
      throw new ApiError('asset_not_found', {
        param,
        message: 'No upload with this id exists for your account, or it expired.',
      });
    if (upload.blocked) throw new ApiError('content_policy_violation', { param });
    // Also the submit's check that the store answers: down, it is 503 service_unavailable now rather
    // than an upstream_error in the worker later.
    if ((await this.storage.size(upload.storage_key)) === null)
      throw new ApiError('asset_not_found', { param, message: 'The upload was deleted or expired.' });
    const outcome = await this.cached(accountId, `upload:${upload.sha256}`, api, signal, async (probeSignal) =>
      // A path on the local backend, a presigned URL on S3: ffprobe reads only the bytes it needs.
      this.prober.probe(
        await this.storage.mediaLocation(upload.storage_key, STORED_PROBE_URL_SECONDS),
        api,
        LOCAL_PROBE_TIMEOUT_MS,
        probeSignal,
      ),
    );
    // ffprobe could not read the stored file over the network: the store failed, not the client.
    if (!outcome.ok && outcome.code === 'invalid_url')
      throw new StorageUnavailableError(outcome.message ?? 'probe failed');
    return this.accept(outcome, { type: 'upload', upload_id: uploadId, filename: upload.filename }, param);
  }

  private async checkUrl(
    accountId: string,
    api: JobApi,
    url: string,
    param: string,
    signal?: () => AbortSignal,
  ): Promise<CheckedSource> {
    const outcome = await this.cached(accountId, `url:${url}`, api, signal, async (probeSignal) => {
      // ffprobe never connects to the source itself: it reads through a loopback proxy whose every
      // connection goes to the addresses checked here (no DNS rebinding, redirects re-checked).
      const proxied = await withPinnedProxy(
        url,
        {
          allow: this.config.allowPrivateUrls,
          timeoutMs: URL_PROBE_TIMEOUT_MS,
          explainAllowList: this.config.nodeEnv !== 'production',
        },
        (localUrl) => this.prober.probe(localUrl, api, URL_PROBE_TIMEOUT_MS, probeSignal),
      );
      if (!proxied.ok) {
        // A source that fails now cannot be accepted: unreachable, refused or expired is invalid_url.
        return { ok: false, code: 'invalid_url', message: `The source URL cannot be used: ${proxied.reason}` };
      }
      return proxied.value.ok ? { ...proxied.value, sizeBytes: proxied.sizeBytes } : proxied.value;
    });
    return this.accept(outcome, { type: 'url', url }, param);
  }

  private accept(outcome: ProbeOutcome, source: ItemSource, param: string): CheckedSource {
    if (!outcome.ok) throw new ApiError(outcome.code, { param, message: outcome.message });
    // Uploads were held to MAX_UPLOAD_BYTES as they arrived; a URL is held to MAX_SOURCE_BYTES when it
    // says how large it is (otherwise the worker's download stops at the limit).
    const sizeBytes = outcome.sizeBytes ?? 0;
    if (source.type === 'url' && sizeBytes > this.config.maxSourceBytes) {
      throw new ApiError('file_too_large', {
        param,
        message: `The source is ${sizeBytes} bytes; a source URL may be at most ${this.config.maxSourceBytes} bytes. Send a smaller file.`,
        details: { size_bytes: sizeBytes, max_source_bytes: this.config.maxSourceBytes },
      });
    }
    const checked = { source, durationSeconds: outcome.durationSeconds, width: outcome.width, height: outcome.height };
    checkMediaRules(checked, param, this.config);
    return checked;
  }

  /**
   * An estimate's described file (`inputs[i].media`): the rules that need no bytes (media-rules.ts) and, for
   * video, a picture size to price — as for a probed source.
   */
  declared(
    api: JobApi,
    media: { duration_seconds: number; width?: number | null; height?: number | null },
    index: number,
  ): CheckedSource<DeclaredSource> {
    const param = `inputs[${index}].media`;
    const video = api === 'sdr2hdr';
    // null is no size either (the DTO lets an optional field be null): such a video was priced as no picture.
    const noWidth = media.width === undefined || media.width === null;
    if (video && (noWidth || media.height === undefined || media.height === null)) {
      throw new ApiError('missing_parameter', {
        param: `${param}.${noWidth ? 'width' : 'height'}`,
        message: 'A video is priced by its picture size: give media.width and media.height.',
      });
    }
    const checked: CheckedSource<DeclaredSource> = {
      source: { type: 'declared' },
      durationSeconds: media.duration_seconds,
      width: video ? (media.width ?? null) : null,
      height: video ? (media.height ?? null) : null,
    };
    checkMediaRules(checked, param, this.config);
    return checked;
  }

  /**
   * A cached verdict, or a probe through the instance's probe slots, on the account's share of them
   * (shared by the account's submits of the same source at the same time). The cache is read again in
   * the slot: a submit that waited for one may find the verdict of a probe that just ended.
   */
  private async cached(
    accountId: string,
    key: string,
    api: JobApi,
    signal: (() => AbortSignal) | undefined,
    probe: (signal: AbortSignal) => Promise<ProbeOutcome>,
  ): Promise<ProbeOutcome> {
    const local = key.startsWith('upload:');
    // Kept here by the key itself: a hit (most submits of an upload) then hashes nothing.
    const localKey = `${api}:${key}`;
    const kept = local ? this.verdicts.get(localKey) : undefined;
    if (kept && kept.until > Date.now()) return kept.outcome;
    const cacheKey = `${this.config.redisPrefix}:probe:${api}:${createHash('sha256').update(key).digest('hex')}`;
    const read = async () => {
      const hit = await this.redis.get(cacheKey);
      return hit ? (JSON.parse(hit) as ProbeOutcome) : null;
    };
    const hit = await read();
    if (hit) return local ? this.keep(localKey, hit) : hit;
    return this.slots.run(accountId, cacheKey, signal?.(), async (probeSignal) => {
      const found = await read();
      if (found) return local ? this.keep(localKey, found) : found;
      const outcome = await probe(probeSignal);
      // Only verdicts on the media are cached: a source that was unreachable (invalid_url) or a probe
      // that ran out of time here (service_unavailable) may do better in a moment.
      if (outcome.ok || (outcome.code !== 'invalid_url' && outcome.code !== 'service_unavailable')) {
        await this.redis.set(cacheKey, JSON.stringify(outcome), 'EX', PROBE_CACHE_SECONDS);
        if (local) this.keep(localKey, outcome);
      }
      return outcome;
    });
  }

  /** Keeps an upload's cached verdict here too for PROBE_CACHE_SECONDS (the oldest goes first when full). */
  private keep(localKey: string, outcome: ProbeOutcome): ProbeOutcome {
    this.verdicts.delete(localKey);
    if (this.verdicts.size >= LOCAL_VERDICTS) {
      const oldest = this.verdicts.keys().next().value;
      if (oldest !== undefined) this.verdicts.delete(oldest);
    }
    this.verdicts.set(localKey, { outcome, until: Date.now() + PROBE_CACHE_SECONDS * 1000 });
    return outcome;
  }
}
