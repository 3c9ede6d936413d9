import type { AppConfig } from '../common/config/config';
import type { ErrorObject } from '../common/errors';
import { ASSET_LINK_TTL_SECONDS, signAssetUrl } from './asset-url';
import { decodedLengthWarnings, type ItemWarning } from './decoded-length';
import { outputPicture, storedOutput, type OutputPicture } from './output-options';
import { PACKAGE_CONTAINER } from './package-files';
import { signPlaylistUrl } from './playback-token';
import { packageRungs } from './pricing';
import type {
  BillingState,
  ItemCheck,
  ItemOutput,
  ItemPhase,
  ItemSource,
  JobApi,
  JobItemRow,
  JobRow,
  JobStatus,
} from './job.types';

/** An item's source as shown: `filename` is the upload's name (null when it had none, and for a URL). */
export type ItemSourceView =
  { type: 'url'; url: string; filename: null } | { type: 'upload'; upload_id: string; filename: string | null };

export interface JobItemView {
  index: number;
  status: string;
  source: ItemSourceView;
  duration_seconds: number;
  /** What the source decoded to (its encoded length); null until the item succeeded. */
  decoded_duration_seconds: number | null;
  /** Things about the item the client should know although it succeeded (e.g. a short source). */
  warnings: ItemWarning[];
  width: number | null;
  height: number | null;
  /** What the item produces (never upscaled); null for audio. */
  output_width: number | null;
  output_height: number | null;
  estimated_credits: number;
  charged_credits: number;
  output: (Record<string, unknown> & { url: string; expires_at: string }) | null;
  /** The output's checks, run as the item ended (docs/api-decisions.md §12); empty until then. */
  checks: ItemCheck[];
  error: ErrorObject | null;
  /** An opaque id of the worker that ran the item (docs/api-decisions.md §11); null until a worker takes it. */
  worker: string | null;
  /** What the item is doing while processing (encoding, joining, storing); null otherwise. */
  phase: ItemPhase | null;
}

export interface JobView {
  object: 'job';
  job_id: string;
  api: string;
  status: JobStatus;
  region: string;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  progress: number;
  items: JobItemView[];
  billing: { estimated_credits: number; charged_credits: number; refunded: boolean; state: BillingState };
  error: ErrorObject | null;
  metadata: Record<string, string>;
}

const iso = (date: Date | null): string | null => (date ? date.toISOString() : null);

/** Where a job is read: the submit's Location header. */
export function jobLocation(api: JobApi, jobId: string): string {
  return `/v1/${api}/jobs/${jobId}`;
}

/** What a job view needs to sign its output links, from the service's configuration. */
export function viewLinks(config: Pick<AppConfig, 'publicBaseUrl' | 'assetUrlSecret'>): {
  baseUrl: string;
  secret: string;
} {
  return { baseUrl: config.publicBaseUrl, secret: config.assetUrlSecret };
}

export function toJobView(
  job: JobRow,
  items: JobItemRow[],
  links: { baseUrl: string; secret: string; now?: number },
): JobView {
  const expiresAt = new Date((links.now ?? Date.now()) + ASSET_LINK_TTL_SECONDS * 1000);
  return {
    object: 'job',
    job_id: job.id,
    api: job.api,
    status: job.status,
    region: job.region,
    created_at: job.created_at.toISOString(),
    started_at: iso(job.started_at),
    finished_at: iso(job.finished_at),
    progress: job.status === 'succeeded' || job.status === 'partially_succeeded' ? 1 : Number(job.progress),
    items: items.map((item) => itemView(job, item, links, expiresAt)),
    billing: {
      estimated_credits: Number(job.estimated_credits),
      charged_credits: Number(job.charged_credits),
      refunded: job.billing_state === 'released',
      state: job.billing_state,
    },
    error: job.error,
    metadata: job.metadata,
  };
}

function itemView(
  job: JobRow,
  item: JobItemRow,
  links: { baseUrl: string; secret: string },
  expiresAt: Date,
): JobItemView {
  // A succeeded item always has its processed length; 0 would be a row written without one (unknown).
  const processed = Number(item.processed_seconds);
  const decoded = item.status === 'succeeded' && processed > 0 ? processed : null;
  return {
    index: item.index,
    status: item.status,
    source: sourceView(item.source),
    duration_seconds: Number(item.duration_seconds),
    decoded_duration_seconds: decoded,
    warnings: decodedLengthWarnings(Number(item.duration_seconds), decoded),
    width: item.width,
    height: item.height,
    ...itemPicture(job, item),
    estimated_credits: Number(item.estimated_credits),
    charged_credits: Number(item.charged_credits),
    output: item.output ? outputView(item.output, links, expiresAt) : null,
    checks: item.checks ?? [],
    error: item.error,
    worker: item.worker,
    // A phase describes work in progress: an ended or waiting item has none.
    phase: item.status === 'processing' ? (item.phase ?? null) : null,
  };
}

/** The picture an item produces: a file's, or a package's top rung (as its estimate said). */
function itemPicture(job: JobRow, item: JobItemRow): OutputPicture {
  const spec = job.output_spec;
  if (spec?.api !== 'sdr2hdr' || !spec.ladder || item.width === null || item.height === null)
    return outputPicture(storedOutput(job), item);
  const [top] = packageRungs(spec, item);
  return { output_width: top.width, output_height: top.height };
}

/**
 * An item's output with its signed links: the file's, and for a video its light map's
 * (`light_map_url`, null when none was made — docs/api-decisions.md §12); the light map's asset id stays inside.
 * An HLS package has no one file to download: its `playlist_url` (the master playlist under a playback
 * token that covers every file of the package) is also its `url`, so a client that only knows `url` gets
 * something a player or ffmpeg opens; `renditions` are as the worker measured them.
 */
function outputView(
  output: ItemOutput,
  links: { baseUrl: string; secret: string },
  expiresAt: Date,
): NonNullable<JobItemView['output']> {
  const { light_map_asset_id: lightMapId, light_map_frame_seconds: frameSeconds, ...stored } = output;
  const sign = (assetId: string) => signAssetUrl(links.baseUrl, assetId, links.secret, expiresAt);
  if (output.container === PACKAGE_CONTAINER) {
    const playlistUrl = signPlaylistUrl(links.baseUrl, output.asset_id, links.secret, expiresAt);
    return {
      ...stored,
      url: playlistUrl,
      expires_at: expiresAt.toISOString(),
      playlist_url: playlistUrl,
      playlist_expires_at: expiresAt.toISOString(),
      renditions: output.renditions ?? [],
    };
  }
  const lightMap = lightMapId
    ? {
        light_map_url: sign(lightMapId),
        light_map_expires_at: expiresAt.toISOString(),
        light_map_frame_seconds: frameSeconds ?? null,
      }
    : { light_map_url: null, light_map_expires_at: null, light_map_frame_seconds: null };
  return {
    ...stored,
    url: sign(output.asset_id),
    expires_at: expiresAt.toISOString(),
    ...(output.video ? lightMap : {}),
  };
}

/** An item's source as the job view and the estimate show it: `filename` is the upload's name, null for a URL. */
export function sourceView(source: ItemSource): ItemSourceView {
  return source.type === 'url'
    ? { type: 'url', url: source.url, filename: null }
    : { type: 'upload', upload_id: source.upload_id, filename: source.filename ?? null };
}
