// The queues' owner in the Nest container: producers (the API's submit, the queue board) and consumers
// (the worker's media and webhook consumers) ask it for what they need; it hands the work to the queue
// driver (driver.ts; BullMqDriver is the one in use) and closes whatever is left at shutdown.
import { Global, Inject, Injectable, Module, type OnApplicationShutdown, type OnModuleDestroy } from '@nestjs/common';
import type { Queue, Worker } from 'bullmq';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { REDIS, type RedisClient } from '../common/redis/redis.module';
import type { QueueData, QueueHandlers, QueueKind } from './catalogue';
import type { QueueDriver, QueueSide, UnitSink } from './driver';
import { BullMqDriver } from './drivers/bullmq.driver';
import { FairShare } from './fair-share';

export type { QueueSide } from './driver';

export const QUEUE_DRIVER = Symbol('QUEUE_DRIVER');

@Injectable()
export class QueueOwner implements OnModuleDestroy, OnApplicationShutdown {
  private readonly fairShare: FairShare;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(QUEUE_DRIVER) private readonly driver: QueueDriver,
    @Inject(REDIS) redis: RedisClient,
  ) {
    this.fairShare = new FairShare(redis, config);
  }

  /**
   * Where units of `kind` (media: of `region`, this process's by default) are added. Media units go
   * through the fair share, which gives each its priority (fair-share.ts).
   */
  sink<Q extends QueueKind>(kind: Q, side: QueueSide, region = this.config.region): UnitSink<Q> {
    const plain: UnitSink<Q> = { add: (units) => this.driver.add(kind, side, region, units) };
    if (kind !== 'media') return plain;
    return this.fairShare.sink(plain as UnitSink<'media'>, region) as UnitSink<Q>;
  }

  /**
   * The backend's view of the queue of `kind` (media: of `region`, this process's by default), one per
   * process and side: the API's submit and its queue board share one.
   */
  queue<Q extends QueueKind>(kind: Q, side: QueueSide, region = this.config.region): Queue<QueueData[Q]> {
    return this.driver.queue(kind, side, region);
  }

  /**
   * Starts this process's consumer of `kind` (media: of its own region). The handler map is checked
   * against the catalogue (queueDispatcher: a missing handler stops start-up naming `owner`).
   */
  worker<Q extends QueueKind>(kind: Q, handlers: QueueHandlers<Q>, owner: string): Worker<QueueData[Q]> {
    return this.driver.work(kind, this.config.region, handlers, owner);
  }

  /** Stops a consumer: no new jobs, running ones finish (no grace period may cut them short). */
  stopWorker(worker: Worker): Promise<void> {
    return this.driver.stopWorker(worker);
  }

  /** Closes a queue, also while Redis is unreachable; a later `queue()` opens a new one. */
  closeQueue(queue: Queue): Promise<void> {
    return this.driver.closeQueue(queue);
  }

  /**
   * The first step of a stop (SIGTERM): every consumer stops taking jobs at once; its owner's own
   * shutdown hook (MediaWorker, WebhookDispatcher) then waits for its running jobs (stopWorker: the same
   * close). Nest runs the modules' hooks one module after another, so a consumer stopped only by its
   * owner's hook kept taking jobs for as long as an earlier module's hook waited (e.g. on Redis).
   */
  onModuleDestroy(): void {
    this.driver.stopTaking();
  }

  /** Whatever its users did not close: consumers first (their running jobs still use the queues). */
  async onApplicationShutdown(): Promise<void> {
    await this.driver.close();
  }
}

/** Global: the API's jobs and queue board and the worker's consumers all use the one owner. */
@Global()
@Module({
  providers: [
    { provide: QUEUE_DRIVER, inject: [APP_CONFIG], useFactory: (config: AppConfig) => new BullMqDriver(config) },
    QueueOwner,
  ],
  exports: [QueueOwner],
})
export class QueuesModule {}
