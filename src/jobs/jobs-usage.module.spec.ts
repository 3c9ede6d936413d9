import { Global, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { DataSource } from 'typeorm';
import { BillingModule } from '../billing/billing.module';
import { BillingService } from '../billing/billing.service';
import { JobsUsageModule } from './jobs-usage.module';

// Nothing here touches the database: the repositories only keep the DataSource until a query.
@Global()
@Module({ providers: [{ provide: DataSource, useValue: {} }], exports: [DataSource] })
class NoDatabase {}

describe('the processing usage billing reads (PROCESSING_USAGE)', () => {
  it('stops start-up when no module provides the processing usage (no quota that silently reads 0)', async () => {
    await expect(Test.createTestingModule({ imports: [NoDatabase, BillingModule] }).compile()).rejects.toThrow(
      /BillingService.*PROCESSING_USAGE/s,
    );
  });

  it('starts with the jobs module providing it', async () => {
    const app = await Test.createTestingModule({ imports: [NoDatabase, JobsUsageModule, BillingModule] }).compile();
    expect(app.get(BillingService)).toBeInstanceOf(BillingService);
  });
});
