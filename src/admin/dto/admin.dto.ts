import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ApiKeyWithSecretResponse, OwnAccountResponse } from '../../account/dto/account.dto';
import { SpendLimitUsd } from '../../billing/spend-limit.dto';
import { MemberResponse } from '../../members/dto/responses';
import {
  IsBoolean,
  IsDateString,
  IsDefined,
  IsEmail,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Length,
  Matches,
  Max,
  Min,
  ValidateIf,
} from 'class-validator';

import { ACCOUNT_STATUSES, PLAN_IDS, SUBSCRIPTION_STATUSES } from '../account-values';

export { ACCOUNT_STATUSES, PLAN_IDS, SUBSCRIPTION_STATUSES };

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

  @ApiPropertyOptional({
    example: 'ada@example.com',
    description:
      'The first owner, who signs in to the dashboard: the answer carries `owner_invite_url`, a one-time ' +
      'set-password link (24 h), also mailed when SMTP is configured.',
  })
  @IsOptional()
  @IsEmail({}, { message: 'owner_email must be an email address' })
  @Length(3, 320)
  owner_email?: string;
}

export class PasswordLinkRequestDto {
  @ApiProperty({ example: 'ada@example.com' })
  @IsDefined()
  @IsEmail({}, { message: 'email must be an email address' })
  @Length(3, 320)
  email: string;
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

  @SpendLimitUsd({ required: false })
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

export class CreatedAccountResponse {
  @ApiProperty({ type: OwnAccountResponse }) account: OwnAccountResponse;
  @ApiProperty({
    type: ApiKeyWithSecretResponse,
    description: 'Its first API key, every scope; the full key (`key`) is shown only here.',
  })
  api_key: ApiKeyWithSecretResponse;
  @ApiPropertyOptional({ type: MemberResponse, description: 'With owner_email: the first owner, invited.' })
  owner?: MemberResponse;
  @ApiPropertyOptional({
    description: "With owner_email: the owner's one-time set-password link (24 h), shown only here (and mailed).",
    example: 'https://api.mediajobs.example/dashboard/set-password#token=q1w2e3r4t5y6u7i8o9p0a1s2d3f4g5h6j7k8l9z0x1c',
  })
  owner_invite_url?: string;
}

export class MaintenanceResponse {
  @ApiProperty({ enum: ['maintenance'] }) object: 'maintenance';
  @ApiProperty({ example: true }) enabled: boolean;
  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'Announced end, if given.' })
  until: string | null;
}

export class BlockedContentResponse {
  @ApiProperty({ enum: ['blocked_content'] }) object: 'blocked_content';
  @ApiProperty({ example: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' }) sha256: string;
  @ApiProperty({ type: String, nullable: true, example: 'DMCA notice 2026-118' }) reason: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
}

export class UnblockedContentResponse {
  @ApiProperty({ enum: ['blocked_content'] }) object: 'blocked_content';
  @ApiProperty({ example: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' }) sha256: string;
  @ApiProperty({ enum: [true] }) deleted: true;
}
