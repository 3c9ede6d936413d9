import { ApiProperty, ApiPropertyOptional, IntersectionType } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsISO8601, IsOptional, Max, Min } from 'class-validator';
import { SCOPES, type Scope } from '../../auth/auth-context';
import { LEDGER_KINDS, type LedgerFilter, type LedgerKind } from '../../billing/billing.repository';
import { ListQuery } from '../../common/pagination';
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
  @ApiProperty({ example: 5000 }) balance_credits: number;
  @ApiProperty({ example: 24, description: 'Held for jobs that have not ended.' }) reserved_credits: number;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
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

class PlanLimitsResponse {
  @ApiProperty({ example: 100 }) requests_per_second: number;
  @ApiProperty({ example: 10 }) concurrent_jobs: number;
  @ApiProperty({
    example: 2160,
    description:
      "Largest output, as the pixels of a 16:9 picture of this many lines: 1080 admits up to 1920×1080's 2,073,600 pixels in any shape (a 1080×1920 portrait, a 1440×1440 square), not 11520×720.",
  })
  max_output_height: number;
  @ApiProperty({ example: ['sdr2hdr', 'audio'], type: [String] }) apis: string[];
}

class QuotaResponse {
  @ApiProperty({ type: Number, nullable: true, example: 6000, description: 'null: no monthly limit.' })
  processing_minutes_limit: number | null;
  @ApiProperty({ example: 42 }) processing_minutes_used: number;
}

export class CreditBalanceResponse {
  @ApiProperty({ enum: ['credit_balance'] }) object: 'credit_balance';
  @ApiProperty({ example: 5000 }) balance_credits: number;
  @ApiProperty({ example: 24, description: 'Held for jobs that have not ended.' }) reserved_credits: number;
  @ApiProperty({ example: 4976 }) available_credits: number;
  @ApiProperty({ example: 'pro' }) plan: string;
  @ApiProperty({ type: Number, nullable: true, example: 250 }) spend_limit_usd: number | null;
  @ApiProperty({ example: 12.5, description: 'Charged this period, in USD.' }) spent_usd: number;
  @ApiProperty({ format: 'date-time' }) period_start: string;
  @ApiProperty({ format: 'date-time' }) period_resets_at: string;
  @ApiProperty({ type: QuotaResponse }) quota: QuotaResponse;
  @ApiProperty({ example: 2, description: 'Jobs counted against limits.concurrent_jobs now (queued and processing).' })
  running_jobs: number;
  @ApiProperty({ type: PlanLimitsResponse, description: "The plan's limits, to show current use against them." })
  limits: PlanLimitsResponse;
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'https://billing.mediajobs.example/topup',
    description: "Where to buy credits: the operator's top-up page. null: credits are added by the operator.",
  })
  topup_url: string | null;
}

/** Which ledger entries: the same filter for a page of them and for the CSV export. */
export class LedgerFilterQuery {
  @ApiPropertyOptional({ enum: LEDGER_KINDS, description: 'Only entries of this kind.' })
  @IsOptional()
  @IsIn(LEDGER_KINDS)
  kind?: LedgerKind;

  @ApiPropertyOptional({
    example: '2026-11-01T00:00:00Z',
    description: 'Only entries created at or after this time (ISO 8601; a bare date is 00:00 UTC).',
  })
  @IsOptional()
  @IsISO8601({ strict: true })
  created_gte?: string;

  @ApiPropertyOptional({
    example: '2026-12-01T00:00:00Z',
    description: 'Only entries created before this time (ISO 8601; a bare date is 00:00 UTC).',
  })
  @IsOptional()
  @IsISO8601({ strict: true })
  created_lt?: string;
}

export class LedgerQuery extends IntersectionType(ListQuery, LedgerFilterQuery) {}

export function ledgerFilter(query: LedgerFilterQuery): LedgerFilter {
  return {
    kind: query.kind,
    createdGte: query.created_gte ? new Date(query.created_gte) : undefined,
    createdLt: query.created_lt ? new Date(query.created_lt) : undefined,
  };
}

export class MonthlySpendQuery {
  @ApiPropertyOptional({
    description: 'How many UTC calendar months, this one included.',
    default: 6,
    minimum: 1,
    maximum: 24,
  })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(24)
  months?: number;
}

class MonthSpend {
  @ApiProperty({ example: '2026-11', description: 'The UTC calendar month (YYYY-MM).' }) month: string;
  @ApiProperty({ type: 'integer', example: 1230 }) charged_credits: number;
  @ApiProperty({ example: 7.38, description: "At the account's current price per credit." }) charged_usd: number;
}

export class MonthlySpendResponse {
  @ApiProperty({ enum: ['monthly_spend'] }) object: 'monthly_spend';
  @ApiProperty({
    type: [MonthSpend],
    description: 'One entry per month, oldest first, this month last; 0 without charges.',
  })
  months: MonthSpend[];
  @ApiProperty({
    type: Number,
    nullable: true,
    example: 250,
    description: "Today's monthly spend cap in USD (it applies to this month); null: none.",
  })
  spend_limit_usd: number | null;
}

export class LedgerEntryResponse {
  @ApiProperty({ enum: ['ledger_entry'] }) object: 'ledger_entry';
  @ApiProperty({ example: 'led_0Qx3cA1b2C3d4E5f6G7h8i9' }) id: string;
  @ApiProperty({
    enum: LEDGER_KINDS,
    example: 'capture',
    description:
      'grant: credits added; authorise: a hold for a job; capture: the part of a hold charged; release: the rest of a hold returned.',
  })
  kind: LedgerKind;
  @ApiProperty({ type: 'integer', example: 24, description: 'Credits moved by this entry (never negative).' })
  credits: number;
  @ApiProperty({ type: String, nullable: true, example: 'job_0Qx3cA1b2C3d4E5f6G7h8i9' }) job_id: string | null;
  @ApiProperty({ type: String, nullable: true, example: null, description: 'Why, for grants made by an operator.' })
  reason: string | null;
  @ApiProperty({ type: 'integer', example: 4976 }) balance_after: number;
  @ApiProperty({ type: 'integer', example: 0 }) reserved_after: number;
  @ApiProperty({ format: 'date-time' }) created_at: string;
}

export class ApiKeyResponse {
  @ApiProperty({ enum: ['api_key'] }) object: 'api_key';
  @ApiProperty({ example: 'key_0Qx3cA1b2C3d4E5f6G7h8i9' }) id: string;
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'Render farm',
    description: 'The name given on create or rotate; null when none was.',
  })
  name: string | null;
  @ApiProperty({ example: 'mjk_fTtnFTta', description: 'The first characters of the key, to recognise it.' })
  prefix: string;
  @ApiProperty({ enum: SCOPES, isArray: true, example: ['sdr2hdr', 'account'] }) scopes: Scope[];
  @ApiProperty({ type: String, format: 'date-time', nullable: true, example: null }) expires_at: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true, example: null }) revoked_at: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) last_used_at: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
}

/** The answer to create and rotate: the only time the full key is shown. */
export class ApiKeyWithSecretResponse extends ApiKeyResponse {
  @ApiProperty({
    example: 'mjk_fTtnFTtaYbrPtILwFlpR2cSFfg9I3pzDDouHmGWv',
    description: 'The full key, shown only in this response: store it now.',
  })
  key: string;
}
