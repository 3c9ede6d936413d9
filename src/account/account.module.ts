import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { BillingModule } from '../billing/billing.module';
import { AccountController } from './account.controller';

@Module({ imports: [AuthModule, BillingModule], controllers: [AccountController] })
export class AccountModule {}
