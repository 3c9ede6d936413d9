// Stand-ins for the worker's ports in the use cases' unit specs (src/processing/**/*.spec.ts): the
// use cases' decisions run without ffmpeg, PostgreSQL or an object store. What a user runs is tested
// end to end in test/jobs with the real ones.
import { Logger } from '@nestjs/common';
import type { AppConfig } from '../../src/common/config/config';
import { StorageUnavailableError, type ObjectEntry, type Storage } from '../../src/common/storage/storage';
import type { JobItemRow, JobRow } from '../../src/jobs/job.types';
import type {
  CheckedOutput,
  CheckRequest,
  EncodeSegmentRequest,
  EncodeSegmentResult,
  JoinRequest,
  LightMapMade,
  LightMapRequest,
  MediaRun,
  MediaRunner,
  EncodePackagePartRequest,
  EncodePackagePartResult,
  JoinPackageRequest,
  RunItemRequest,
  RunItemResult,
  SplitRequest,
  ToolFailure,
} from '../../src/processing/media-runner';
import type { ProbeOutcome } from '../../src/media/media.types';
import type { OutagePolicies } from '../../src/processing/outage-retry';
import type { WorkDirs } from '../../src/processing/work-dirs';
import { STORE_OUTAGE, DEPENDENCY_OUTAGE } from '../../src/processing/outage-retry';

/** The use cases log what they do and why; a spec asserts on outcomes instead. */
export function silenceNestLogs(): void {
  beforeAll(() => Logger.overrideLogger(false));
  afterAll(() => Logger.overrideLogger(['log', 'error', 'warn', 'debug', 'verbose', 'fatal']));
}

export function jobRow(overrides: Partial<JobRow> = {}): JobRow {
  return {
    id: 'job_spec',
    account_id: 'acct_spec',
    api: 'sdr2hdr',
    status: 'processing',
    region: 'spec',
    output_options: {
      resolution: 'source',
      peak_nits: 1000,
      container: 'mp4',
      quality: 'balanced',
      mapping: 'reference',
      transfer: 'pq',
    },
    output_spec: {
      api: 'sdr2hdr',
      container: 'mp4',
      targetLines: null,
      mapping: 'reference',
      transfer: 'pq',
      peakNits: 1000,
      quality: 'balanced',
      preset: 'veryfast',
      crf: 12,
      package: 'file',
      ladder: null,
    },
    metadata: {},
    estimated_credits: '10',
    charged_credits: '0',
    billing_state: 'authorised',
    error: null,
    progress: 0,
    request_id: 'req_spec',
    attempts: 2,
    created_at: new Date(),
    started_at: new Date(),
    finished_at: null,
    ...overrides,
  };
}

export function itemRow(overrides: Partial<JobItemRow> = {}): JobItemRow {
  return {
    job_id: 'job_spec',
    index: 0,
    status: 'processing',
    source: { type: 'upload', upload_id: 'upl_spec' },
    duration_seconds: '4',
    width: 320,
    height: 180,
    estimated_credits: '10',
    charged_credits: '0',
    processed_seconds: '0',
    output: null,
    checks: [],
    error: null,
    worker: 'wkr_spec',
    phase: 'encoding',
    ...overrides,
  };
}

/** What the use cases read of the configuration. */
export function specConfig(overrides: Partial<AppConfig> = {}): AppConfig {
  return {
    docsUrl: 'https://docs.example/errors',
    jobTimeLimitSeconds: 3600,
    segmentSeconds: 2,
    maxDurationSeconds: 3600,
    workerMaxPixels: 3840 * 2160,
    jobRetentionDays: 7,
    ...overrides,
  } as AppConfig;
}

/** The worker's outage policies with pauses of a millisecond (the same judgement of what an outage is). */
export const QUICK_OUTAGES: OutagePolicies = {
  store: { isOutage: STORE_OUTAGE.isOutage, pauseMs: (attempt) => (attempt <= 3 ? 1 : null) },
  dependency: { isOutage: DEPENDENCY_OUTAGE.isOutage, pauseMs: (attempt) => (attempt <= 3 ? 1 : null) },
};

/** An error as a dropped PostgreSQL connection throws it. */
export function connectionLost(): Error {
  return new Error('Connection terminated unexpectedly');
}

/** Objects in memory; `failWrites` StorageUnavailableErrors come first. */
export class MemoryStorage implements Partial<Storage> {
  readonly backend = 'local' as const;
  readonly objects = new Map<string, string>();
  readonly removed: string[] = [];
  failWrites = 0;

  async writeFile(key: string, path: string): Promise<{ sizeBytes: number }> {
    if (this.failWrites > 0) {
      this.failWrites -= 1;
      throw new StorageUnavailableError('the object store is down');
    }
    this.objects.set(key, path);
    return { sizeBytes: path.length };
  }

  async localFile(key: string, scratchPath: string): Promise<string | null> {
    return this.objects.has(key) ? scratchPath : null;
  }

  async remove(key: string): Promise<void> {
    this.objects.delete(key);
    this.removed.push(key);
  }

  async removeMany(keys: string[]): Promise<void> {
    for (const key of keys) await this.remove(key);
  }

  async *list(prefix: string): AsyncIterable<ObjectEntry> {
    for (const key of [...this.objects.keys()].filter((candidate) => candidate.startsWith(prefix)))
      yield { key, sizeBytes: 1, lastModified: new Date() };
  }

  asStorage(): Storage {
    return this as unknown as Storage;
  }
}

/** Work folders that exist only as names; which were made and removed. */
export class FakeWorkDirs {
  readonly created: string[] = [];
  readonly removed: string[] = [];

  async create(name: string): Promise<string> {
    const dir = `/work/${name}`;
    this.created.push(dir);
    return dir;
  }

  async remove(dir: string): Promise<void> {
    this.removed.push(dir);
  }

  async using<T>(name: string, work: (dir: string) => Promise<T>): Promise<T> {
    const dir = await this.create(name);
    try {
      return await work(dir);
    } finally {
      await this.remove(dir);
    }
  }

  asWorkDirs(): WorkDirs {
    return this as unknown as WorkDirs;
  }
}

const made = (path: string, container = 'mp4'): RunItemResult => ({
  ok: true,
  path,
  processedSeconds: 4,
  outputWidth: 320,
  outputHeight: 180,
  container,
  contentType: 'video/mp4',
  media: { codec: 'hevc' },
});

/** A MediaRunner that makes nothing but answers as told; every call is recorded. */
export class FakeRunner implements MediaRunner {
  readonly calls: { method: keyof MediaRunner; request: unknown }[] = [];
  runResult = (request: RunItemRequest): RunItemResult => made(`${request.outputPath}.mp4`);
  probeResult: ProbeOutcome = {
    ok: true,
    probe: {
      container: 'mp4',
      formatName: 'mov,mp4',
      durationSeconds: 6,
      encrypted: false,
      video: {
        index: 0,
        codec: 'h264',
        width: 320,
        height: 180,
        fps: 30,
        colorPrimaries: null,
        colorTransfer: null,
        colorSpace: null,
        colorRange: null,
        pixFmt: 'yuv420p',
      },
      audio: { index: 1, codec: 'aac', sampleRate: 48000, channels: 2 },
    },
  };
  keyframeTimes: number[] | null = [0, 1, 2, 3, 4, 5];
  /** How many parts the split makes (null: as many as asked for). */
  partCount: number | null = null;
  splitFails = false;
  encodeResult: EncodeSegmentResult | null = null;
  joinResult: RunItemResult | null = null;

  async run(request: RunItemRequest): Promise<RunItemResult> {
    this.calls.push({ method: 'run', request });
    return this.runResult(request);
  }

  async probe(path: string): Promise<ProbeOutcome> {
    this.calls.push({ method: 'probe', request: path });
    return this.probeResult;
  }

  async keyframes(path: string, _videoIndex: number, _run: MediaRun): Promise<number[] | null> {
    this.calls.push({ method: 'keyframes', request: path });
    return this.keyframeTimes;
  }

  async split(request: SplitRequest): Promise<{ ok: true; parts: string[] } | ToolFailure> {
    this.calls.push({ method: 'split', request });
    if (this.splitFails) return { ok: false, stderrTail: ['split failed'] };
    const count = this.partCount ?? request.cuts.length + 1;
    return { ok: true, parts: Array.from({ length: count }, (_, n) => `${request.dir}/part-${n}.mp4`) };
  }

  async extractAudio(request: MediaRun & { outputPath: string }): Promise<{ ok: true } | ToolFailure> {
    this.calls.push({ method: 'extractAudio', request });
    return { ok: true };
  }

  async encodeSegment(request: EncodeSegmentRequest): Promise<EncodeSegmentResult> {
    this.calls.push({ method: 'encodeSegment', request });
    return this.encodeResult ?? { ok: true, path: request.outputPath, processedSeconds: 2 };
  }

  async encodePackagePart(request: EncodePackagePartRequest): Promise<EncodePackagePartResult> {
    this.calls.push({ method: 'encodePackagePart', request });
    return { ok: true, files: {}, processedSeconds: request.unit.duration };
  }

  async joinPackage(request: JoinPackageRequest): Promise<RunItemResult> {
    this.calls.push({ method: 'joinPackage', request });
    return this.joinResult ?? made(`${request.outputPath}.hls`, 'hls');
  }

  async join(request: JoinRequest): Promise<RunItemResult> {
    this.calls.push({ method: 'join', request });
    return this.joinResult ?? made(`${request.outputPath}.${request.output.container}`, request.output.container);
  }

  checkResult: CheckedOutput = {
    ok: true,
    measured: { codec: 'hevc', frames: 180 },
    checks: [{ name: 'frame_count', passed: true, expected: '180', measured: 180 }],
  };

  async check(request: CheckRequest): Promise<CheckedOutput> {
    this.calls.push({ method: 'check', request });
    return this.checkResult;
  }

  /** Makes no file: the item ends without a light map, as when rendering it fails. */
  async lightMap(request: LightMapRequest): Promise<LightMapMade | ToolFailure> {
    this.calls.push({ method: 'lightMap', request });
    return { ok: false, stderrTail: ['the fake runner makes no light map'] };
  }

  called(method: keyof MediaRunner): unknown[] {
    return this.calls.filter((call) => call.method === method).map((call) => call.request);
  }
}
