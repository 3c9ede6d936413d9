import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { AuthContext } from '../auth/auth-context';
import { Caller, MembersOnly } from '../auth/auth.decorators';
import type { ListResponse } from '../common/pagination';
import { ApiErrorResponses } from '../common/openapi/api-error-responses';
import { ChangeRoleDto, InviteMemberDto } from './dto/members.dto';
import { InvitedMemberResponse, MemberListResponse, MemberResponse } from './dto/responses';
import { MembersService, type InvitedMemberView, type MemberView } from './members.service';

/** The people of an account and their roles: owners only, signed in (a key is not a person). */
@ApiTags('members')
@ApiSecurity('session')
@MembersOnly('owner')
@Controller('v1/account/members')
export class MembersController {
  constructor(private readonly members: MembersService) {}

  @Get()
  @ApiOperation({ summary: "The account's members and pending invitations" })
  @ApiResponse({ status: 200, type: MemberListResponse })
  @ApiErrorResponses('auth', 'session', 'rate')
  list(@Caller() caller: AuthContext): Promise<ListResponse<MemberView>> {
    return this.members.list(caller.accountId);
  }

  @Post()
  @ApiOperation({ summary: 'Invite someone by email with a role: a one-time set-password link (24 h), mailed' })
  @ApiResponse({ status: 201, type: InvitedMemberResponse })
  @ApiErrorResponses('auth', 'session', 'rate', 'invalid')
  invite(@Caller() caller: AuthContext, @Body() body: InviteMemberDto): Promise<InvitedMemberView> {
    return this.members.invite(caller.accountId, body.email, body.role);
  }

  @Patch(':id')
  @ApiOperation({ summary: "Change a member's role (an account keeps at least one owner)" })
  @ApiResponse({ status: 200, type: MemberResponse })
  @ApiErrorResponses('auth', 'session', 'rate', 'invalid', 'missing')
  changeRole(@Caller() caller: AuthContext, @Param('id') id: string, @Body() body: ChangeRoleDto): Promise<MemberView> {
    return this.members.changeRole(caller.accountId, id, body.role);
  }

  @Delete(':id')
  @ApiOperation({ summary: 'Remove a member or withdraw an invitation; their sessions end at once' })
  @ApiResponse({ status: 200, type: MemberResponse })
  @ApiErrorResponses('auth', 'session', 'rate', 'invalid', 'missing')
  remove(@Caller() caller: AuthContext, @Param('id') id: string): Promise<MemberView> {
    return this.members.remove(caller.accountId, id);
  }

  @Post(':id/resend-invitation')
  @HttpCode(200)
  @ApiOperation({ summary: 'A new invitation link for someone who has not joined yet (the old link stops working)' })
  @ApiResponse({ status: 200, type: InvitedMemberResponse })
  @ApiErrorResponses('auth', 'session', 'rate', 'invalid', 'missing')
  resend(@Caller() caller: AuthContext, @Param('id') id: string): Promise<InvitedMemberView> {
    return this.members.resendInvitation(caller.accountId, id);
  }
}
