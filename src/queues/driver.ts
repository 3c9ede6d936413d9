// The seam between the service and its queue backend (shape: twenty's message-queue drivers): the
// service says what a unit is — its queue, job name, data, id, when it may start — and a driver puts
// it on its backend and runs consumers. BullMqDriver (drivers/bullmq.driver.ts) is the one in use;
// its backend-specific settings (attempts, backoff, retention, locks) stay inside it. What reads a
// queue's state (the queue board, the metrics' depth, the reconciler's unit state) still uses BullMQ's
// own views through `queue()`: those are BullMQ's, and a second driver would bring its own.
import type { Queue, Worker } from 'bullmq';
import type { JobName, QueueData, QueueHandlers, QueueKind } from './catalogue';

/** Who uses a queue: the API only adds and reads (fails fast), a worker process waits on the backend. */
export type QueueSide = 'producer' | 'worker';

/** One unit of queue work. */
export interface QueueUnit<Q extends QueueKind> {
  name: JobName<Q>;
  data: QueueData[Q];
  /** A unit with the id of one still waiting or running is not added a second time. */
  id: string;
  /** Not to start before this many milliseconds from now. */
  delayMs?: number;
  /** Served lowest first; 0 or none: before every prioritized unit (fair-share.ts sets it for media units). */
  priority?: number;
}

/** Where the units of one queue go: the only thing the enqueue functions (enqueue.ts) need. */
export interface UnitSink<Q extends QueueKind> {
  add(units: QueueUnit<Q>[]): Promise<void>;
}

export interface QueueDriver {
  /** Adds units to the queue of `kind` (media: of `region`). */
  add<Q extends QueueKind>(kind: Q, side: QueueSide, region: string, units: QueueUnit<Q>[]): Promise<void>;
  /** The backend's view of a queue, for what reads its state. */
  queue<Q extends QueueKind>(kind: Q, side: QueueSide, region: string): Queue<QueueData[Q]>;
  /** Starts a consumer of the queue of `kind` (media: of `region`) that runs each unit by its name. */
  work<Q extends QueueKind>(kind: Q, region: string, handlers: QueueHandlers<Q>, owner: string): Worker<QueueData[Q]>;
  /** Stops a consumer: no new units, running ones finish. */
  stopWorker(worker: Worker): Promise<void>;
  /** Closes a queue, also while the backend is unreachable. */
  closeQueue(queue: Queue): Promise<void>;
  /** The first step of a stop: every consumer stops taking units at once. */
  stopTaking(): void;
  /** Whatever is left open: consumers first (their running units still use the queues), then queues. */
  close(): Promise<void>;
}
