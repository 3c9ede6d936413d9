import { Module } from '@nestjs/common';
import { IdempotencyInterceptor } from './idempotency.interceptor';
import { IdempotencyRepository } from './idempotency.repository';

/** The interceptor is attached to each POST route at start-up (idempotent-routes.ts), not globally. */
@Module({ providers: [IdempotencyRepository, IdempotencyInterceptor], exports: [IdempotencyInterceptor] })
export class IdempotencyModule {}
