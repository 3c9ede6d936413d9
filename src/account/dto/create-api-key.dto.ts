import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMinSize,
  IsArray,
  IsDateString,
  IsDefined,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Length,
  Matches,
  Max,
  Min,
} from 'class-validator';
import { SCOPES, type Scope } from '../../auth/auth-context';

/** A key's name: what a person calls it (`Render farm`), 1–100 characters, no control characters. */
const KeyName = (description: string) =>
  applyDecorators(
    ApiPropertyOptional({ type: String, minLength: 1, maxLength: 100, example: 'Render farm', description }),
    IsOptional(),
    IsString(),
    Length(1, 100, { message: 'name must be 1 to 100 characters' }),
    Matches(/^\P{Cc}*$/u, { message: 'name must not contain control characters' }),
  );

export class CreateApiKeyDto {
  @KeyName('A name to tell the key apart (shown in the list and the dashboard); optional.')
  name?: string;

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
  @KeyName("The new key's name; without it the new key keeps the old key's name.")
  name?: string;

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
