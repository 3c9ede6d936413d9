import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { ErrorObject } from '../common/errors';
import { newId } from '../common/ids';

export const JOB_EVENTS = ['job.succeeded', 'job.partially_succeeded', 'job.failed', 'job.cancelled'] as const;
export type JobEvent = (typeof JOB_EVENTS)[number];
/** Sent only on request ("send a test event") to one endpoint, whatever events it subscribes to. */
export const TEST_EVENT = 'webhook.test';
export type EventType = JobEvent | typeof TEST_EVENT;

export interface EventPayload {
  id: string;
  event: EventType;
  created_at: string;
  /** `job` is null in a test event. */
  data: { job: { job_id: string } | null; error: ErrorObject | null };
}

/**
 * Writes a job's terminal event to the outbox inside the transaction that ends the job: the event
 * exists exactly when the job ended (no lost event, none invented by a rolled-back transaction).
 * `data.error` is the very object stored on the job, so the two are identical.
 */
@Injectable()
export class OutboxWriter {
  async write(
    manager: EntityManager,
    event: { accountId: string; jobId: string; event: JobEvent; error: ErrorObject | null },
  ): Promise<EventPayload> {
    const payload: EventPayload = {
      id: newId('evt'),
      event: event.event,
      created_at: new Date().toISOString(),
      data: { job: { job_id: event.jobId }, error: event.error },
    };
    await manager.query(
      `INSERT INTO outbox_events (id, account_id, job_id, event, payload, created_at) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (job_id, event) DO NOTHING`,
      [payload.id, event.accountId, event.jobId, event.event, payload, payload.created_at],
    );
    return payload;
  }
}
