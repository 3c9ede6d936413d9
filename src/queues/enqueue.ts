// The one way each kind of unit is queued, whoever queues it (the API's submit, the worker's fan-out,
// the reconciler, the webhook pump): ids that make a second add of a waiting or running unit a no-op.
// How long a unit is retried is the driver's (retry-policy.ts, drivers/bullmq.driver.ts).
import {
  mediaItemUnitId,
  mediaSegmentUnitId,
  PROCESS_ITEM,
  PROCESS_JOB,
  PROCESS_SEGMENT,
  type WebhookJobData,
} from './catalogue';
import type { UnitSink } from './driver';

/** A media job's own unit, by the API and by the reconciler: its id is the job id. */
export async function enqueueMediaJob(sink: UnitSink<'media'>, jobId: string): Promise<void> {
  await sink.add([{ name: PROCESS_JOB, data: { jobId }, id: jobId }]);
}

/** Whose work a unit is, for the fair share (fair-share.ts). */
export interface UnitOwner {
  account: string;
  plan: string;
}

/** Items of a job as units of their own (id `<job id>.<index>`), by the fan-out and by the reconciler. */
export async function enqueueMediaItems(
  sink: UnitSink<'media'>,
  jobId: string,
  indexes: number[],
  owner?: UnitOwner,
): Promise<void> {
  if (indexes.length === 0) return;
  await sink.add(
    indexes.map((index) => ({
      name: PROCESS_ITEM,
      data: { jobId, index, ...owner },
      id: mediaItemUnitId(jobId, index),
    })),
  );
}

/**
 * Segments of an item as units of their own (any worker of the region): id `<job id>.<index>.s<segment>`;
 * a failed or lost segment is retried alone.
 */
export async function enqueueMediaSegments(
  sink: UnitSink<'media'>,
  jobId: string,
  index: number,
  segments: number[],
  owner?: Partial<UnitOwner>,
): Promise<void> {
  if (segments.length === 0) return;
  await sink.add(
    segments.map((segment) => ({
      name: PROCESS_SEGMENT,
      data: { jobId, index, segment, ...owner },
      id: mediaSegmentUnitId(jobId, index, segment),
    })),
  );
}

/**
 * Webhook deliveries, by the pump and for a punctual retry: the id names the delivery and its attempt
 * number, so a delivery already queued for that attempt is not added twice.
 */
export async function enqueueWebhookDeliveries(
  sink: UnitSink<'webhooks'>,
  deliveries: { id: string; attempts: number }[],
  delayMs = 0,
): Promise<void> {
  if (deliveries.length === 0) return;
  await sink.add(
    deliveries.map((delivery) => ({
      name: 'deliver' as const,
      data: { deliveryId: delivery.id } satisfies WebhookJobData,
      id: `${delivery.id}-${delivery.attempts}`,
      delayMs,
    })),
  );
}
