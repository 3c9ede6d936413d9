import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsBoolean,
  IsDateString,
  IsDefined,
  IsIn,
  IsInt,
  IsNumber,
  IsOptional,
  IsString,
  Length,
  Matches,
  ValidateBy,
  Max,
  Min,
  ValidateIf,
} from 'class-validator';

/**
 * At most two decimal places. Instead of IsNumber's `maxDecimalPlaces`, which throws (a 500) on a
 * number JavaScript prints in exponent form such as 5e-324: its decimals are counted from the digits.
 */
function HasAtMostCents(): PropertyDecorator {
  return ValidateBy({
    name: 'hasAtMostCents',
    validator: {
      validate: (value: unknown) => {
        if (typeof value !== 'number' || !Number.isFinite(value)) return false;
        const [digits, exponent = '0'] = value.toString().split('e');
        return (digits.split('.')[1]?.length ?? 0) - Number(exponent) <= 2;
      },
      defaultMessage: (args) => `${args?.property ?? 'the value'} must have at most 2 decimal places`,
    },
  });
}

export const PLAN_IDS = ['free', 'starter', 'pro', 'enterprise'] as const;
export const ACCOUNT_STATUSES = ['active', 'suspended'] as const;
export const SUBSCRIPTION_STATUSES = ['active', 'payment_failed', 'inactive'] as const;

export class CreateAccountDto {
  @ApiProperty({ example: 'Acme Studios' })
  @IsDefined()
  @IsString()
  @Length(1, 200)
  name: string;

  @ApiProperty({ enum: PLAN_IDS, example: 'starter' })
  @IsDefined()
  @IsIn(PLAN_IDS)
  plan: (typeof PLAN_IDS)[number];
}

export class GrantCreditsDto {
  @ApiProperty({ example: 1000, minimum: 1 })
  @IsDefined()
  @IsInt()
  @Min(1)
  @Max(1_000_000_000)
  credits: number;

  @ApiProperty({ example: 'October top-up' })
  @IsDefined()
  @IsString()
  @Length(1, 500)
  reason: string;
}

export class PatchAccountDto {
  @ApiPropertyOptional({ enum: PLAN_IDS })
  @ValidateIf((_, value) => value !== undefined) // absent: unchanged; null: refused (the column has no null)
  @IsIn(PLAN_IDS)
  plan?: (typeof PLAN_IDS)[number];

  @ApiPropertyOptional({ enum: ACCOUNT_STATUSES })
  @ValidateIf((_, value) => value !== undefined) // absent: unchanged; null: refused (the column has no null)
  @IsIn(ACCOUNT_STATUSES)
  status?: (typeof ACCOUNT_STATUSES)[number];

  @ApiPropertyOptional({ enum: SUBSCRIPTION_STATUSES })
  @ValidateIf((_, value) => value !== undefined) // absent: unchanged; null: refused (the column has no null)
  @IsIn(SUBSCRIPTION_STATUSES)
  subscription_status?: (typeof SUBSCRIPTION_STATUSES)[number];

  @ApiPropertyOptional({ type: Number, nullable: true, description: 'Monthly spend cap in USD; null removes it.' })
  @ValidateIf((_, value) => value !== null)
  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @HasAtMostCents()
  @Min(0)
  @Max(10_000_000)
  spend_limit_usd?: number | null;
}

export class MaintenanceDto {
  @ApiProperty()
  @IsDefined()
  @IsBoolean()
  enabled: boolean;

  @ApiPropertyOptional({ format: 'date-time', description: 'Expected end; clients get Retry-After until then.' })
  @IsOptional()
  @IsDateString({ strict: true })
  until?: string;
}

export class BlockedContentDto {
  @ApiProperty({
    description: 'SHA-256 of the file, lower-case hex',
    example: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  })
  @IsDefined()
  @IsString()
  @Matches(/^[0-9a-f]{64}$/, { message: 'sha256 must be 64 lower-case hex characters' })
  sha256: string;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @Length(1, 500)
  reason?: string;
}
