// What an event is: its types and the body every subscriber gets (webhook deliveries and event
// streams alike). Apart from the outbox writer, so the pub/sub channel (event-channel.ts) can name it
// without importing the writer that imports the channel.
import type { ErrorObject } from '../common/errors';

export const JOB_EVENTS = ['job.succeeded', 'job.partially_succeeded', 'job.failed', 'job.cancelled'] as const;
export type JobEvent = (typeof JOB_EVENTS)[number];
/** Sent only on request ("send a test event") to one endpoint, whatever events it subscribes to. */
export const TEST_EVENT = 'webhook.test';
export type EventType = JobEvent | typeof TEST_EVENT;

/** One item of an ended job in its event: its status, charge, measured output (no link) and checks. */
export interface EventItem {
  index: number;
  status: string;
  charged_credits: number;
  output: object | null;
  checks: { name: string; passed: boolean; expected: string; measured: string | number | null }[];
}

export interface EventPayload {
  id: string;
  event: EventType;
  created_at: string;
  /**
   * `job` is null in a test event and holds `job_id` only (spec §6); per-item results go beside it in
   * `items` (docs/api-decisions.md §13), absent on a test event and on events written before them.
   */
  data: { job: { job_id: string } | null; items?: EventItem[]; error: ErrorObject | null };
}
