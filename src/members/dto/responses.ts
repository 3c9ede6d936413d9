// Success bodies of the member and session routes, for the OpenAPI document.
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { MEMBER_ROLES } from '../../auth/auth-context';

export class MemberResponse {
  @ApiProperty({ enum: ['member'] }) object: 'member';
  @ApiProperty({ example: 'mem_0Qx3cA1b2C3d4E5f6G7h8i9' }) id: string;
  @ApiProperty({ example: 'grace@example.com' }) email: string;
  @ApiProperty({ enum: MEMBER_ROLES, example: 'developer' }) role: string;
  @ApiProperty({ enum: ['invited', 'active'], description: '`invited` until the person chooses a password.' })
  status: string;
  @ApiProperty({ format: 'date-time' }) invited_at: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) joined_at: string | null;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) last_sign_in_at: string | null;
  @ApiProperty({
    format: 'date-time',
    nullable: true,
    type: String,
    description: 'When the current invitation link stops working (invited members only).',
  })
  invitation_expires_at: string | null;
  @ApiPropertyOptional({ enum: [true], description: 'Present only in the answer to a removal.' }) deleted?: true;
}

export class InvitedMemberResponse extends MemberResponse {
  @ApiProperty({
    description: 'The one-time set-password link (24 h), shown only here; also mailed when SMTP is configured.',
    example: 'https://api.mediajobs.example/dashboard/set-password#token=q1w2e3r4t5y6u7i8o9p0a1s2d3f4g5h6j7k8l9z0x1c',
  })
  invite_url: string;
}

export class MemberListResponse {
  @ApiProperty({ enum: ['list'] }) object: 'list';
  @ApiProperty({ type: [MemberResponse] }) data: MemberResponse[];
  @ApiProperty({ example: false }) has_more: boolean;
  @ApiProperty({ nullable: true, type: String, example: null }) next_cursor: string | null;
}

class SessionAccount {
  @ApiProperty({ enum: ['account'] }) object: 'account';
  @ApiProperty({ example: 'acct_0Qx3cA1b2C3d4E5f6G7h8i9' }) id: string;
  @ApiProperty({ example: 'Acme Studios' }) name: string;
  @ApiProperty({ example: 'pro' }) plan: string;
  @ApiProperty({ enum: ['active', 'suspended'] }) status: string;
}

export class SessionResponse {
  @ApiProperty({ enum: ['session'] }) object: 'session';
  @ApiProperty({ type: MemberResponse }) member: MemberResponse;
  @ApiProperty({ type: SessionAccount }) account: SessionAccount;
  @ApiProperty({
    description: 'Send it as X-CSRF-Token with every request of this session that changes something.',
    example: 'Zm9vYmFyYmF6cXV4cXV1eGNvcmdlZ3JhdWx0Z2FycGx5',
  })
  csrf_token: string;
  @ApiProperty({ format: 'date-time', description: 'Absolute expiry of the session.' }) expires_at: string;
  @ApiProperty({ example: 7200, description: 'The session also ends after this long without a request.' })
  idle_timeout_seconds: number;
}

export class SignOutResponse {
  @ApiProperty({ enum: ['session_revocation'] }) object: 'session_revocation';
  @ApiProperty({ example: 1, description: 'How many sessions ended.' }) revoked_sessions: number;
}

export class PasswordResetRequestResponse {
  @ApiProperty({ enum: ['password_reset_request'] }) object: 'password_reset_request';
  @ApiProperty({ example: 'ada@example.com' }) email: string;
  @ApiProperty({
    example: 'If this email belongs to a member, a reset link is on its way.',
    description: 'The same answer whether or not the email belongs to a member.',
  })
  message: string;
}

export class PasswordLinkResponse {
  @ApiProperty({ enum: ['password_link'] }) object: 'password_link';
  @ApiProperty({ enum: ['invite', 'reset'] }) purpose: string;
  @ApiProperty({ example: 'grace@example.com' }) email: string;
  @ApiProperty({ example: 'Acme Studios' }) account_name: string;
  @ApiProperty({ enum: MEMBER_ROLES }) role: string;
  @ApiProperty({ format: 'date-time' }) expires_at: string;
}

export class OperatorPasswordLinkResponse {
  @ApiProperty({ enum: ['password_link_url'] }) object: 'password_link_url';
  @ApiProperty({ example: 'ada@example.com' }) email: string;
  @ApiProperty({
    example: 'https://api.mediajobs.example/dashboard/set-password#token=q1w2e3r4t5y6u7i8o9p0a1s2d3f4g5h6j7k8l9z0x1c',
  })
  url: string;
  @ApiProperty({ format: 'date-time' }) expires_at: string;
}
