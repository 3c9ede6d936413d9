import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMinSize, IsArray, IsDateString, IsDefined, IsIn, IsInt, IsOptional, Max, Min } from 'class-validator';
import { SCOPES, type Scope } from '../../auth/auth-context';

export class CreateApiKeyDto {
  @ApiProperty({ enum: SCOPES, isArray: true, example: ['sdr2hdr', 'audio'] })
  @IsDefined()
  @IsArray()
  @ArrayMinSize(1)
  @IsIn(SCOPES, { each: true, message: `each scope must be one of ${SCOPES.join(', ')}` })
  scopes: Scope[];

  @ApiPropertyOptional({ format: 'date-time', description: 'When the key stops working (optional).' })
  @IsOptional()
  @IsDateString({ strict: true })
  expires_at?: string;
}

export class RotateApiKeyDto {
  @ApiPropertyOptional({
    description: 'Seconds the old key keeps working (0 = revoked at once).',
    default: 0,
    maximum: 604800,
  })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(604800)
  grace_seconds?: number;
}
