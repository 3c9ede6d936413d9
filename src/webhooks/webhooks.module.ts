import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { EventFeed } from './event-feed';
import { EventStream } from './event-stream';
import { OutboxWriter } from './outbox.writer';
import { StreamSlots } from './stream-slots';
import { WebhookDispatcher } from './webhook-dispatcher';
import { WebhooksMetrics } from './webhooks-metrics';
import { EventsController, WebhookEndpointsController } from './webhooks.controller';
import { WebhookDeliveryRepository } from './webhook-delivery.repository';
import { WebhooksRepository } from './webhooks.repository';
import { WebhooksService } from './webhooks.service';

/** A leaf: the outbox that jobs and processing write a job's terminal event to, in their transaction. */
@Module({ providers: [OutboxWriter], exports: [OutboxWriter] })
export class WebhooksModule {}

/** API process: endpoint registry, events, delivery log and redelivery (scope `webhooks`). */
@Module({
  // The event stream judges its credential again every second by the access guard's rules; a test
  // event is announced to the streams by the outbox's owner.
  imports: [AuthModule, WebhooksModule],
  controllers: [WebhookEndpointsController, EventsController],
  providers: [WebhooksService, WebhooksRepository, WebhooksMetrics, EventStream, EventFeed, StreamSlots],
})
export class WebhooksApiModule {}

/** Worker process only: relays the outbox and sends deliveries. */
@Module({ providers: [WebhookDispatcher, WebhookDeliveryRepository] })
export class WebhooksWorkerModule {}
