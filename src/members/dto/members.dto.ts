import { ApiProperty } from '@nestjs/swagger';
import { IsDefined, IsEmail, IsIn, IsString, Length, MaxLength } from 'class-validator';
import { MEMBER_ROLES, type MemberRole } from '../../auth/auth-context';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../password';

export class SignInDto {
  @ApiProperty({ example: 'ada@example.com', maxLength: 320 })
  @IsDefined()
  @IsString()
  @MaxLength(320)
  email: string;

  @ApiProperty({ example: 'correct horse battery staple', format: 'password', maxLength: PASSWORD_MAX_LENGTH })
  @IsDefined()
  @IsString()
  @MaxLength(PASSWORD_MAX_LENGTH)
  password: string;
}

export class PasswordResetRequestDto {
  @ApiProperty({ example: 'ada@example.com', maxLength: 320 })
  @IsDefined()
  @IsEmail({}, { message: 'email must be an email address' })
  @MaxLength(320)
  email: string;
}

export class PasswordLinkDto {
  @ApiProperty({
    description: 'The token of the link (after `#token=` in /dashboard/set-password).',
    example: 'q1w2e3r4t5y6u7i8o9p0a1s2d3f4g5h6j7k8l9z0x1c',
  })
  @IsDefined()
  @IsString()
  @MaxLength(128)
  token: string;
}

export class RedeemPasswordLinkDto extends PasswordLinkDto {
  @ApiProperty({
    format: 'password',
    minLength: PASSWORD_MIN_LENGTH,
    maxLength: PASSWORD_MAX_LENGTH,
    example: 'correct horse battery staple',
  })
  @IsDefined()
  @IsString()
  @Length(1, PASSWORD_MAX_LENGTH)
  password: string;
}

export class InviteMemberDto {
  @ApiProperty({ example: 'grace@example.com', maxLength: 320 })
  @IsDefined()
  @IsEmail({}, { message: 'email must be an email address' })
  @MaxLength(320)
  email: string;

  @ApiProperty({ enum: MEMBER_ROLES, example: 'developer' })
  @IsDefined()
  @IsIn(MEMBER_ROLES)
  role: MemberRole;
}

export class ChangeRoleDto {
  @ApiProperty({ enum: MEMBER_ROLES, example: 'viewer' })
  @IsDefined()
  @IsIn(MEMBER_ROLES)
  role: MemberRole;
}
