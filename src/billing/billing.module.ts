import { Module } from '@nestjs/common';
import { BillingRepository } from './billing.repository';
import { BillingService } from './billing.service';
import { HoldsModule } from './holds.module';

@Module({
  imports: [HoldsModule],
  providers: [BillingRepository, BillingService],
  exports: [BillingService, HoldsModule],
})
export class BillingModule {}
