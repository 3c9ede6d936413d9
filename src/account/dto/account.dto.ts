import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { SpendLimitUsd } from '../../billing/spend-limit.dto';

export class PatchOwnAccountDto {
  @SpendLimitUsd({ required: true })
  spend_limit_usd: number | null;
}

export class UsageQuery {
  @ApiPropertyOptional({ description: 'How many UTC days, today included.', default: 30, minimum: 1, maximum: 90 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(90)
  days?: number;
}

export class OwnAccountResponse {
  @ApiProperty({ enum: ['account'] }) object: 'account';
  @ApiProperty({ example: 'acct_0Qx3cA1b2C3d4E5f6G7h8i9' }) id: string;
  @ApiProperty({ example: 'Acme Studios' }) name: string;
  @ApiProperty({ example: 'pro' }) plan: string;
  @ApiProperty({ enum: ['active', 'suspended'] }) status: string;
  @ApiProperty({ enum: ['active', 'payment_failed', 'inactive'] }) subscription_status: string;
  @ApiProperty({ type: Number, nullable: true, example: 250, description: 'Monthly spend cap in USD; null: none.' })
  spend_limit_usd: number | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
}

class UsageDay {
  @ApiProperty({ example: '2025-11-14', format: 'date' }) date: string;
  @ApiProperty({ example: 48 }) charged_credits: number;
  @ApiProperty({ example: 0.29 }) charged_usd: number;
}

export class UsageResponse {
  @ApiProperty({ enum: ['usage'] }) object: 'usage';
  @ApiProperty({ type: [UsageDay], description: 'One entry per UTC day, oldest first, days without charges as 0.' })
  days: UsageDay[];
  @ApiProperty({ example: 1230 }) total_charged_credits: number;
  @ApiProperty({ example: 7.38, description: "At the account's current price per credit." })
  total_charged_usd: number;
}
