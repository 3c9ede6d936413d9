// The worker's second look at a source, against what the submit checked and priced (pure, unit-tested).
// A source_url is fetched twice — probed at submit, downloaded here — and may answer differently the
// second time. The item is held to the submit's verdict: longer than MAX_DURATION_SECONDS is
// duration_exceeded; more credits, or a larger output (the plan was checked on the priced pixels),
// than was priced is source_changed. Either way the item fails and is charged 0: processing only the
// priced part instead would hand the client a silently cut output, and a source that changed is
// better submitted again and priced as it is.
import type { ErrorCode } from '../common/errors';
import type { JobApi, JobItemRow, JobRow } from '../jobs/job.types';
import { storedSpec } from '../jobs/output-options';
import { knownOutputSize } from '../media/output-geometry';
import { itemCredits, packageRungs, sumCredits } from '../jobs/pricing';
import type { HdrOutputSpec } from '../media/output-spec';

/** What the submit checked and priced for one item. */
export interface PricedSource {
  api: JobApi;
  sourceType: 'url' | 'upload';
  /** The output's lines on the short side (sdr2hdr: the spec's targetLines); null keeps the source's size. */
  targetLines: number | null;
  estimatedCredits: number;
  /** The source size the submit probe saw (null for audio or unknown). */
  width: number | null;
  height: number | null;
  /** An HLS package's spec, priced per rung (pricing.ts packageRungs); absent for a file. */
  packageSpec?: HdrOutputSpec;
}

/** What the submit checked and priced for an item of a job, for the worker's re-check of the bytes it has. */
export function pricedSource(job: JobRow, item: JobItemRow): PricedSource {
  const spec = storedSpec(job);
  return {
    api: job.api,
    sourceType: item.source.type,
    targetLines: spec.api === 'sdr2hdr' ? spec.targetLines : null,
    estimatedCredits: Number(item.estimated_credits),
    width: item.width,
    height: item.height,
    ...(spec.api === 'sdr2hdr' && spec.ladder && { packageSpec: spec }),
  };
}

/** What the worker's own probe of the downloaded file says. */
export interface ActualSource {
  durationSeconds: number;
  width: number | null;
  height: number | null;
}

export interface RecheckFailure {
  ok: false;
  code: Extract<ErrorCode, 'duration_exceeded' | 'source_changed'>;
  message: string;
}

export function recheckSource(
  priced: PricedSource,
  actual: ActualSource,
  limits: { maxDurationSeconds: number },
): RecheckFailure | null {
  if (actual.durationSeconds > limits.maxDurationSeconds) {
    const lasts = `lasts ${Math.ceil(actual.durationSeconds)} s; this API accepts at most ${limits.maxDurationSeconds} s. It was not processed and you were not charged.`;
    return {
      ok: false,
      code: 'duration_exceeded',
      message: priced.sourceType === 'url' ? `The source changed after submit: it now ${lasts}` : `The input ${lasts}`,
    };
  }
  // The output's pixels, as the submit priced and checked the plan on them (output-options.ts outputPixels).
  const pricedPixels = priced.api === 'sdr2hdr' ? pixels(priced, priced.targetLines) : 0;
  const actualPixels = priced.api === 'sdr2hdr' ? pixels(actual, priced.targetLines) : 0;
  // A package is priced per rung as the submit priced it; its rungs never exceed the source (the pixels above).
  const credits = priced.packageSpec
    ? sumCredits(actual.durationSeconds, packageRungs(priced.packageSpec, actual))
    : itemCredits(priced.api, actual.durationSeconds, actualPixels);
  if (credits > priced.estimatedCredits || actualPixels > pricedPixels) {
    const picture =
      priced.api === 'sdr2hdr'
        ? ` at ${sides(actual, priced.targetLines)} (priced: ${sides(priced, priced.targetLines)})`
        : '';
    return {
      ok: false,
      code: 'source_changed',
      message: `The source changed after submit: it now lasts ${Math.ceil(actual.durationSeconds)} s${picture} and would cost ${credits} credits, but ${priced.estimatedCredits} were priced and held. It was not processed and you were not charged; submit the job again to have it priced as it is now.`,
    };
  }
  return null;
}

/** An output picture's sides as a client reads them ("1920×1080"). */
function sides(source: { width: number | null; height: number | null }, lines: number | null): string {
  const size = knownOutputSize(source, lines);
  return size ? `${size.width}×${size.height}` : 'an unknown size';
}

function pixels(source: { width: number | null; height: number | null }, lines: number | null): number {
  const size = knownOutputSize(source, lines);
  return size ? size.width * size.height : 0;
}
