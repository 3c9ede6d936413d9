import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsDateString, IsDefined, IsInt, IsOptional, IsString, Length, Max, Min } from 'class-validator';

// Malformed keys are not a shape error: they answer license_invalid, like unknown ones, so the
// DTO asks only for a string of a sane length.
export class LicenseDeviceDto {
  @ApiProperty({ description: 'The licence key (`mjl_…`).', example: 'mjl_4Vq8ZrT2mXkP9sLwN3bYc7HdJ6fGa1Re5uQo' })
  @IsDefined()
  @IsString()
  @Length(1, 200)
  license_key: string;

  @ApiProperty({ description: 'A stable identifier of the machine, chosen by the plugin.', example: 'host-7f3a9c' })
  @IsDefined()
  @IsString()
  @Length(1, 200)
  device_id: string;
}

export class ActivateLicenseDto extends LicenseDeviceDto {
  @ApiPropertyOptional({ description: 'A name to recognise the machine by.', example: 'Studio workstation' })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  device_name?: string;
}

export class CreateLicenseDto {
  @ApiProperty({ example: 'acct_0Ab3dEfGh1234567890abcd' })
  @IsDefined()
  @IsString()
  @Length(1, 100)
  account_id: string;

  @ApiProperty({ minimum: 1, maximum: 10000, example: 3 })
  @IsDefined()
  @IsInt()
  @Min(1)
  @Max(10000)
  max_devices: number;

  @ApiProperty({ format: 'date-time', description: 'When the licence term ends (in the future).' })
  @IsDefined()
  @IsDateString({ strict: true })
  expires_at: string;

  @ApiPropertyOptional({
    description: 'How long a token works without online validation.',
    default: 604800,
    minimum: 1,
    maximum: 31536000,
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(31_536_000)
  offline_grace_seconds?: number;

  @ApiPropertyOptional({ description: 'Name of the plan the licence grants.', default: 'standard', example: 'studio' })
  @IsOptional()
  @IsString()
  @Length(1, 64)
  plan?: string;
}

// Success bodies of the licence routes, for the OpenAPI document (license.service.ts builds them).

class LicenseSummaryResponse {
  @ApiProperty({ example: 'lic_0Qx3cA1b2C3d4E5f6G7h8i9' }) id: string;
  @ApiProperty({ example: 'standard' }) plan: string;
  @ApiProperty({ format: 'date-time' }) expires_at: string;
  @ApiProperty({ type: 'integer', example: 3 }) max_devices: number;
  @ApiProperty({ type: 'integer', example: 1 }) active_devices: number;
}

export class LicenseActivationResponse {
  @ApiProperty({ enum: ['license_activation'] }) object: 'license_activation';
  @ApiProperty({ example: 'act_0Qx3cA1b2C3d4E5f6G7h8i9' }) activation_id: string;
  @ApiProperty({ example: 'host-7f3a9c' }) device_id: string;
  @ApiProperty({ type: LicenseSummaryResponse }) license: LicenseSummaryResponse;
  @ApiProperty({
    example: 'eyJhbGciOiJFZERTQSIsImtpZCI6Im1qLTEifQ.eyJsaWNlbnNlX2lkIjoibGljXzEifQ.c2lnbmF0dXJl',
    description: 'Ed25519-signed token (JWS compact); verify offline with GET /v1/license/public-key.',
  })
  token: string;
  @ApiProperty({ format: 'date-time', description: 'Validate online again before then.' })
  offline_grace_until: string;
}

export class LicenseDeactivationResponse {
  @ApiProperty({ enum: ['license_deactivation'] }) object: 'license_deactivation';
  @ApiProperty({ example: 'act_0Qx3cA1b2C3d4E5f6G7h8i9' }) activation_id: string;
  @ApiProperty({ example: 'host-7f3a9c' }) device_id: string;
  @ApiProperty({ format: 'date-time' }) deactivated_at: string;
  @ApiProperty({ type: LicenseSummaryResponse }) license: LicenseSummaryResponse;
}

class LicenseEntitlementsDevice {
  @ApiProperty({ example: 'host-7f3a9c' }) id: string;
  @ApiProperty({ type: String, nullable: true, example: 'Studio workstation' }) name: string | null;
  @ApiProperty({ example: 'act_0Qx3cA1b2C3d4E5f6G7h8i9' }) activation_id: string;
  @ApiProperty({ format: 'date-time' }) first_seen_at: string;
  @ApiProperty({ format: 'date-time' }) last_seen_at: string;
}

class LicenseEntitlementsToken {
  @ApiProperty({ format: 'date-time' }) issued_at: string;
  @ApiProperty({ format: 'date-time' }) offline_grace_until: string;
}

export class LicenseEntitlementsResponse {
  @ApiProperty({ enum: ['license'] }) object: 'license';
  @ApiProperty({ example: 'lic_0Qx3cA1b2C3d4E5f6G7h8i9' }) id: string;
  @ApiProperty({ enum: ['active'] }) status: 'active';
  @ApiProperty({ example: 'standard' }) plan: string;
  @ApiProperty({ format: 'date-time' }) expires_at: string;
  @ApiProperty({ type: 'integer', example: 3 }) max_devices: number;
  @ApiProperty({ type: 'integer', example: 1 }) active_devices: number;
  @ApiProperty({ type: 'integer', example: 604800 }) offline_grace_seconds: number;
  @ApiProperty({ type: LicenseEntitlementsDevice }) device: LicenseEntitlementsDevice;
  @ApiProperty({ type: LicenseEntitlementsToken }) token: LicenseEntitlementsToken;
}

export class PublicJwkResponse {
  @ApiProperty({ enum: ['OKP'] }) kty: 'OKP';
  @ApiProperty({ enum: ['Ed25519'] }) crv: 'Ed25519';
  @ApiProperty({ example: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo', description: 'The public key, base64url.' })
  x: string;
  @ApiProperty({ example: 'mj-1', description: 'Matches the `kid` in a token header.' }) kid: string;
  @ApiProperty({ enum: ['EdDSA'] }) alg: 'EdDSA';
  @ApiProperty({ enum: ['sig'] }) use: 'sig';
}

export class AdminLicenseResponse {
  @ApiProperty({ enum: ['license'] }) object: 'license';
  @ApiProperty({ example: 'lic_0Qx3cA1b2C3d4E5f6G7h8i9' }) id: string;
  @ApiProperty({ example: 'acct_0Qx3cA1b2C3d4E5f6G7h8i9' }) account_id: string;
  @ApiProperty({ example: 'mjl_4Vq8ZrT2', description: 'The first characters of the key.' }) key_prefix: string;
  @ApiProperty({ example: 'standard' }) plan: string;
  @ApiProperty({ type: 'integer', example: 3 }) max_devices: number;
  @ApiProperty({ type: 'integer', example: 0 }) active_devices: number;
  @ApiProperty({ format: 'date-time' }) expires_at: string;
  @ApiProperty({ type: 'integer', example: 604800 }) offline_grace_seconds: number;
  @ApiProperty({ type: String, format: 'date-time', nullable: true, example: null }) revoked_at: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
}

/** The answer to issuing a licence: the only time its key is shown. */
export class AdminLicenseWithKeyResponse extends AdminLicenseResponse {
  @ApiProperty({
    example: 'mjl_4Vq8ZrT2kP0sW6yB1nD3fH5jL7',
    description: 'The licence key for the customer, shown only in this response.',
  })
  license_key: string;
}
