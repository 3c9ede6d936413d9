import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import type { Queue, Worker } from 'bullmq';
import { randomUUID } from 'node:crypto';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { isUnavailableError } from '../common/errors/classify';
import { type AddressPolicy, createAddressPolicy } from '../common/net/address-policy';
import { PeriodicTask } from '../common/periodic';
import { batchPlan, inBatches, type BatchRun } from '../common/upkeep-batches';
import { QueueOwner } from '../queues/queue-owner';
import type { WebhookJobData } from '../queues/catalogue';
import { enqueueWebhookDeliveries } from '../queues/enqueue';
import { attemptOutcome, webhookAttempted } from '../metrics/job-metrics';
import { REDIS, type RedisClient } from '../common/redis/redis.module';
import { publishEvents } from './event-channel';
import { nextAttemptDelayMs } from './retry-policy';
import { type AttemptResult, sendWebhook } from './webhook-sender';
import { type AttemptOutcome, type DueDelivery, WebhookDeliveryRepository } from './webhook-delivery.repository';

/** How often the outbox is relayed and due deliveries are (re)queued: the latency of a new event. */
const PUMP_MS = 1000;
const BATCH = 200;
/** Longer than one attempt can take (10 s timeout), so a live worker never loses its lease mid-attempt. */
const LEASE_SECONDS = 60;
const PURGE_MS = 3600_000;

/**
 * The worker process's webhook sender. The database decides what is due: a pump relays new outbox
 * events into deliveries and puts every due, unleased delivery on the `webhooks` queue (the job id
 * names the delivery and its attempt number, so a job already queued is not added twice); a retry is
 * also queued as a BullMQ delayed job for punctuality. A Redis flush or a dead worker therefore
 * costs at most a pump interval (or a lease), never an event.
 */
@Injectable()
export class WebhookDispatcher implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(WebhookDispatcher.name);
  private readonly inflight = new Set<AbortController>();
  private readonly policy: AddressPolicy;
  private worker?: Worker<WebhookJobData>;
  private queue?: Queue<WebhookJobData>;
  private readonly pumpTask = new PeriodicTask('webhook pump', this.logger, () => this.pump());
  private readonly purgeTask = new PeriodicTask('webhook event purge', this.logger, () => this.purge());
  private pumping?: Promise<void>;
  private stopping = false;

  constructor(
    private readonly repository: WebhookDeliveryRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(REDIS) private readonly redis: RedisClient,
    private readonly queues: QueueOwner,
  ) {
    this.policy = createAddressPolicy(config.allowPrivateUrls);
  }

  async onApplicationBootstrap(): Promise<void> {
    this.queue = this.queues.queue('webhooks', 'worker');
    this.worker = this.queues.worker(
      'webhooks',
      { deliver: (job) => this.deliver(job.data.deliveryId) },
      'WebhookDispatcher',
    );
    this.worker.on('failed', (job, error) =>
      this.logger.warn(
        { delivery_id: job?.data.deliveryId, err: error },
        'webhook delivery job failed; the pump retries it',
      ),
    );

    this.pumpTask.start(PUMP_MS);
    this.purgeTask.start(PURGE_MS);
    void this.pump();
  }

  /**
   * Stops at once: attempts in flight are aborted and their deliveries handed back, due again for
   * any worker. Before (not on) shutdown, so Postgres is still open for the hand-back.
   */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    this.pumpTask.stop();
    this.purgeTask.stop();
    // Bounded: with Redis down a queue command waits for it, and shutdown must not.
    await Promise.race([this.pumping, new Promise((resolve) => setTimeout(resolve, 2000).unref())]);
    for (const controller of this.inflight) controller.abort(new Error('worker shutting down'));
    if (this.worker) await this.queues.stopWorker(this.worker);
    const queue = this.queue;
    // Nothing is queued from here on (a late pump would otherwise open the queue again).
    this.queue = undefined;
    if (queue) await this.queues.closeQueue(queue);
  }

  /** Relays new events and queues every due delivery; one run at a time. Errors wait for the next tick. */
  private pump(): Promise<void> {
    if (this.stopping || this.pumping) return this.pumping ?? Promise.resolve();
    this.pumping = (async () => {
      try {
        for (;;) {
          const relayed = await this.repository.relayOutbox(BATCH, this.firstDelayMs());
          // The event streams' second chance at each event (event-channel.ts); best effort: the events
          // are committed and delivered as webhooks whatever Redis says, and a stream that missed one
          // catches up when it resumes (event-channel.ts).
          await publishEvents(this.redis, this.config.redisPrefix, relayed).catch(() => undefined);
          if (relayed.length < BATCH) break;
        }
        await this.enqueue(await this.repository.dueDeliveries(BATCH));
      } catch (error) {
        if (!isUnavailableError(error)) this.logger.error({ err: error }, 'webhook pump failed');
      } finally {
        this.pumping = undefined;
      }
    })();
    return this.pumping;
  }

  /** Events (with their deliveries and attempts) are kept as long as the jobs they belong to; purged in paced batches. */
  purge(): Promise<BatchRun> {
    return inBatches(
      batchPlan(this.config, () => this.purgeTask.stopped),
      (limit) => this.repository.purgeEvents(this.config.jobRetentionDays, limit),
    );
  }

  private async enqueue(deliveries: DueDelivery[], delayMs = 0): Promise<void> {
    if (this.queue) await enqueueWebhookDeliveries(this.queues.sink('webhooks', 'worker'), deliveries, delayMs);
  }

  private firstDelayMs(): number {
    return nextAttemptDelayMs(this.config.webhookRetryScheduleSeconds, 0) ?? 0;
  }

  /** One attempt of one delivery, if it is due and no other worker holds it. */
  private async deliver(deliveryId: string): Promise<void> {
    const token = randomUUID();
    const claimed = await this.repository.claim(deliveryId, token, LEASE_SECONDS);
    if (!claimed) return;
    if (claimed.disabled) {
      await this.repository.abandon(deliveryId, token, 'The endpoint was disabled before this attempt.');
      return;
    }

    // Logged before it is sent: a request the outcome of which is lost (with the worker, or its database
    // connection) still counts in the delivery log when the delivery is sent again after the lease.
    const attemptsMade = await this.repository.startAttempt(deliveryId, token, new Date());
    if (attemptsMade === null) return;
    const controller = new AbortController();
    this.inflight.add(controller);
    let result: AttemptResult;
    try {
      result = await sendWebhook(
        {
          url: claimed.url,
          secrets: claimed.previous_secret ? [claimed.secret, claimed.previous_secret] : [claimed.secret],
          eventId: claimed.event_id,
          body: JSON.stringify(claimed.payload),
        },
        { allow: this.policy, signal: controller.signal },
      );
    } catch (error) {
      // Shutting down (or an unexpected failure): no verdict, so the delivery goes back as it was.
      await this.repository.release(deliveryId, token);
      if (controller.signal.aborted) return;
      throw error;
    } finally {
      this.inflight.delete(controller);
    }

    let outcome: AttemptOutcome;
    if (result.verdict === 'delivered') {
      outcome = { state: 'delivered' };
    } else if (result.verdict === 'gone') {
      outcome = { state: 'failed' };
    } else {
      const delayMs = nextAttemptDelayMs(this.config.webhookRetryScheduleSeconds, attemptsMade, {
        retryAfterSeconds: result.retryAfterSeconds,
      });
      outcome = delayMs === null ? { state: 'failed' } : { state: 'pending', delayMs };
    }
    const recorded = await this.repository.recordAttempt(
      deliveryId,
      token,
      { attempt: attemptsMade, statusCode: result.statusCode, durationMs: result.durationMs, error: result.error },
      outcome,
      result.verdict === 'gone' ? 'The endpoint answered HTTP 410 Gone.' : undefined,
    );
    const outcomeClass = attemptOutcome(result.statusCode, result.error);
    if (recorded) webhookAttempted(outcomeClass, claimed.event_created_at, outcome.state === 'delivered');
    this.logger.log(
      {
        delivery_id: deliveryId,
        event_id: claimed.event_id,
        endpoint_id: claimed.endpoint_id,
        attempt: attemptsMade,
        status: result.statusCode,
        outcome: outcomeClass,
        duration_ms: result.durationMs,
        state: outcome.state,
        ...(result.error ? { error: result.error } : {}),
      },
      'webhook attempt',
    );
    if (recorded && outcome.state === 'pending') {
      // Punctual retry; if Redis loses it, the pump queues the delivery once it is due.
      await this.enqueue([{ id: deliveryId, attempts: attemptsMade }], outcome.delayMs).catch((error: unknown) =>
        this.logger.warn({ delivery_id: deliveryId, err: error }, 'could not queue the retry; the pump will'),
      );
    }
  }
}
