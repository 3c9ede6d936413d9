import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Put, Query } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { AdminOnly } from '../auth/auth.decorators';
import { ListQuery } from '../common/pagination';
import { ApiErrorResponses } from '../common/openapi/api-error-responses';
import { AdminService } from './admin.service';
import { OperatorPasswordLinkResponse } from '../members/dto/responses';
import {
  BlockedContentDto,
  BlockedContentResponse,
  CreateAccountDto,
  CreatedAccountResponse,
  GrantCreditsDto,
  MaintenanceDto,
  MaintenanceResponse,
  PasswordLinkRequestDto,
  PatchAccountDto,
  UnblockedContentResponse,
} from './dto/admin.dto';
import { LedgerEntryResponse, OwnAccountResponse } from '../account/dto/account.dto';
import { ApiPage, ApiSuccess } from '../common/openapi/api-success';

@ApiTags('admin')
@ApiSecurity('admin_token')
@AdminOnly()
@Controller('v1/admin')
export class AdminController {
  constructor(private readonly admin: AdminService) {}

  @Post('accounts')
  @ApiResponse({ status: 201, type: CreatedAccountResponse })
  @ApiOperation({
    summary:
      'Create an account and its first API key (all scopes; the key is shown once); with owner_email, its first owner and owner_invite_url',
  })
  @ApiErrorResponses('admin', 'invalid')
  createAccount(@Body() body: CreateAccountDto) {
    return this.admin.createAccount(body.name, body.plan, body.owner_email);
  }

  @Post('password-links')
  @ApiOperation({
    summary: "A member's one-time set-password link (24 h; earlier links stop working), for an operator to hand over",
  })
  @ApiResponse({ status: 201, type: OperatorPasswordLinkResponse })
  @ApiErrorResponses('admin', 'invalid', 'missing')
  passwordLink(@Body() body: PasswordLinkRequestDto) {
    return this.admin.passwordLink(body.email);
  }

  @Get('accounts')
  @ApiOperation({ summary: 'List accounts, newest first' })
  @ApiPage(OwnAccountResponse)
  @ApiErrorResponses('admin', 'invalid')
  listAccounts(@Query() query: ListQuery) {
    return this.admin.listAccounts(query.limit, query.starting_after);
  }

  @Get('accounts/:id')
  @ApiOperation({ summary: 'Read an account' })
  @ApiSuccess(200, OwnAccountResponse, 'The account')
  @ApiErrorResponses('admin', 'missing')
  getAccount(@Param('id') id: string) {
    return this.admin.getAccount(id);
  }

  @Patch('accounts/:id')
  @ApiOperation({ summary: 'Change plan, status, subscription status or spend limit' })
  @ApiSuccess(200, OwnAccountResponse, 'The account, changed')
  @ApiErrorResponses('admin', 'invalid', 'missing')
  patchAccount(@Param('id') id: string, @Body() body: PatchAccountDto) {
    return this.admin.patchAccount(id, body);
  }

  @Post('accounts/:id/credits')
  @ApiOperation({ summary: 'Grant credits (adds a ledger entry)' })
  @ApiSuccess(201, LedgerEntryResponse, 'The grant in the ledger')
  @ApiErrorResponses('admin', 'invalid', 'missing')
  grantCredits(@Param('id') id: string, @Body() body: GrantCreditsDto) {
    return this.admin.grantCredits(id, body.credits, body.reason);
  }

  @Put('maintenance')
  @HttpCode(200)
  @ApiOperation({ summary: 'Switch maintenance mode on or off (every non-admin route answers 503 maintenance_window)' })
  @ApiSuccess(200, MaintenanceResponse, 'Maintenance mode as it is now')
  @ApiErrorResponses('admin', 'invalid')
  setMaintenance(@Body() body: MaintenanceDto) {
    return this.admin.setMaintenance(body.enabled, body.until);
  }

  @Post('blocked-content')
  @ApiOperation({ summary: 'Block a file by its SHA-256 (content_policy_violation on upload or submit)' })
  @ApiSuccess(201, BlockedContentResponse, 'The hash, blocked')
  @ApiErrorResponses('admin', 'invalid')
  blockContent(@Body() body: BlockedContentDto) {
    return this.admin.blockContent(body.sha256, body.reason);
  }

  @Delete('blocked-content/:sha256')
  @ApiOperation({ summary: 'Remove a hash from the block list' })
  @ApiSuccess(200, UnblockedContentResponse, 'The hash, no longer blocked')
  @ApiErrorResponses('admin', 'missing')
  unblockContent(@Param('sha256') sha256: string) {
    return this.admin.unblockContent(sha256);
  }
}
