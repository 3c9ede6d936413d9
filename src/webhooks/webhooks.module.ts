import { Module } from '@nestjs/common';
import { OutboxWriter } from './outbox.writer';

/** A leaf: the outbox today; endpoint registry and delivery arrive with the webhooks issue. */
@Module({ providers: [OutboxWriter], exports: [OutboxWriter] })
export class WebhooksModule {}
