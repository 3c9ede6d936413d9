// The API's scrape-time read of the webhook backlog (pending deliveries, disabled endpoints).
import { Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { registerSnapshotReader, unregisterSnapshotReader, type SystemSnapshot } from '../metrics/system-gauges';
import { WebhooksRepository } from './webhooks.repository';

@Injectable()
export class WebhooksMetrics implements OnModuleInit, OnModuleDestroy {
  private readonly reader = async (): Promise<SystemSnapshot> => ({ webhooks: await this.repository.backlog() });

  constructor(private readonly repository: WebhooksRepository) {}

  onModuleInit(): void {
    registerSnapshotReader('webhooks', this.reader);
  }

  onModuleDestroy(): void {
    unregisterSnapshotReader('webhooks', this.reader);
  }
}
