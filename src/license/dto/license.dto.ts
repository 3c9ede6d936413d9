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
