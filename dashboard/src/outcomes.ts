// How an error and a job's ending read and look: chosen by the catalogue's family (`type`) and, for
// the few codes whose family's words would mislead, by the code — never by the HTTP status.
import type { JobStatus } from './api';

/** The colour of a notice: who has to act, and how worried to be. */
export type Tone =
  /** Something is wrong with what was sent or with the media: change it. */
  | 'danger'
  /** Money or limits: top up, raise a limit, or wait. */
  | 'warning'
  /** On our side or a host's: nothing to change, try again later. */
  | 'outage'
  /** Not a failure: an ending someone chose, or a state that just is. */
  | 'neutral';

export interface Wording {
  title: string;
  tone: Tone;
  /** False for an ending someone chose (a cancelled job): announced politely, not as an alert. */
  failure?: false;
}

/** One entry per family of the catalogue (src/common/errors/catalogue.ts ERROR_TYPES). */
const FAMILIES: Record<string, Wording> = {
  auth_error: { title: 'Not allowed', tone: 'danger' },
  billing_error: { title: 'Billing stopped this', tone: 'warning' },
  rate_limit_error: { title: 'Limit reached', tone: 'warning' },
  invalid_request_error: { title: 'Check the request', tone: 'danger' },
  resource_error: { title: 'Not possible', tone: 'neutral' },
  processing_error: { title: 'Processing failed', tone: 'danger' },
  server_error: { title: 'The service had a problem', tone: 'outage' },
  license_error: { title: 'Licence problem', tone: 'danger' },
};

/** Codes whose family's words would tell the wrong story. */
const CODES: Record<string, Wording> = {
  // A processing_error by family, but an ending someone chose, not a failure.
  job_cancelled: { title: 'Cancelled', tone: 'neutral', failure: false },
  // The source host or storage failed while the worker fetched or stored: nothing in the request to fix.
  upstream_error: { title: 'A source or storage host failed', tone: 'outage' },
  // Found by the worker after the submit was accepted: the source went away (or its signature expired).
  invalid_url: { title: 'The source could not be read', tone: 'danger' },
  // The output was made but measured wrong: "Processing failed" would hide that it was checked and not charged.
  output_check_failed: { title: 'The output failed its checks (not charged)', tone: 'danger' },
};

const UNKNOWN: Wording = { title: 'Error', tone: 'danger' };

/** invalid_url naming a field that is not a job's source (a webhook endpoint's `url`): refused when given. */
const REFUSED_URL: Wording = { title: 'The URL was refused', tone: 'danger' };

export function errorWording(error: { type: string; code: string; param?: string | null } | null): Wording {
  if (!error) return UNKNOWN;
  if (error.code === 'invalid_url' && error.param && !error.param.includes('source')) return REFUSED_URL;
  return CODES[error.code] ?? FAMILIES[error.type] ?? UNKNOWN;
}

/** The heading above a finished job's error, per terminal status. */
export const ENDING_HEADINGS: Partial<Record<JobStatus, string>> = {
  failed: 'Why it failed',
  partially_succeeded: 'Why some inputs failed',
  cancelled: 'Why it stopped',
};
