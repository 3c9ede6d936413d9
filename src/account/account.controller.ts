import { Readable } from 'node:stream';
import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Patch, Post, Query, Res } from '@nestjs/common';
import { ApiOperation, ApiProduces, ApiResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import type { AuthContext } from '../auth/auth-context';
import { Caller, MembersOnly, RequireScope } from '../auth/auth.decorators';
import { ApiKeysService, type ApiKeyView } from '../auth/api-keys.service';
import {
  BillingService,
  type CreditBalance,
  type DailyUsage,
  type LedgerEntry,
  type MonthlySpend,
} from '../billing/billing.service';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { ApiErrorResponses } from '../common/openapi/api-error-responses';
import { ListQuery, type ListResponse } from '../common/pagination';
import { AccountService } from './account.service';
import type { AccountView } from './account-view';
import { ApiPage, ApiSuccess } from '../common/openapi/api-success';
import {
  ApiKeyResponse,
  ApiKeyWithSecretResponse,
  CreditBalanceResponse,
  LedgerEntryResponse,
  ledgerFilter,
  LedgerFilterQuery,
  LedgerQuery,
  MonthlySpendQuery,
  MonthlySpendResponse,
  OwnAccountResponse,
  PatchOwnAccountDto,
  UsageQuery,
  UsageResponse,
} from './dto/account.dto';
import { CreateApiKeyDto, RotateApiKeyDto } from './dto/create-api-key.dto';

@ApiTags('account')
@ApiSecurity('api_key')
@Controller('v1/account')
export class AccountController {
  constructor(
    private readonly billing: BillingService,
    private readonly keys: ApiKeysService,
    private readonly accounts: AccountService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get()
  @RequireScope('account')
  @ApiOperation({ summary: 'The calling account: name, plan, status and monthly spend cap' })
  @ApiResponse({ status: 200, type: OwnAccountResponse })
  @ApiErrorResponses('auth', 'rate')
  account(@Caller() caller: AuthContext): Promise<AccountView> {
    return this.accounts.get(caller.accountId);
  }

  @Patch()
  @MembersOnly('owner')
  @ApiOperation({
    summary: 'Set, raise, lower or remove (null) the monthly spend cap: an owner, signed in (never an API key)',
  })
  @ApiResponse({ status: 200, type: OwnAccountResponse })
  @ApiErrorResponses('auth', 'session', 'rate', 'invalid')
  patchAccount(@Caller() caller: AuthContext, @Body() body: PatchOwnAccountDto): Promise<AccountView> {
    return this.accounts.setSpendLimit(caller.accountId, body.spend_limit_usd);
  }

  @Get('usage')
  @RequireScope('account')
  @ApiOperation({ summary: 'Credits charged per UTC day over the last days (default 30), from the ledger' })
  @ApiResponse({ status: 200, type: UsageResponse })
  @ApiErrorResponses('auth', 'rate', 'invalid')
  usage(@Caller() caller: AuthContext, @Query() query: UsageQuery): Promise<DailyUsage> {
    return this.billing.dailyUsage(caller.accountId, query.days ?? 30, caller.plan.usdPerCredit);
  }

  @Get('credits')
  @ApiResponse({ status: 200, type: CreditBalanceResponse })
  @RequireScope('account')
  @ApiOperation({ summary: 'Credit balance, reservations, spend and quota of this period' })
  @ApiErrorResponses('auth', 'rate')
  async credits(@Caller() caller: AuthContext): Promise<CreditBalance & { topup_url: string | null }> {
    // Where credits come from: the operator's page (BILLING_TOPUP_URL), or null (the operator adds them).
    return { ...(await this.billing.credits(caller.accountId)), topup_url: this.config.billingTopupUrl };
  }

  @Get('monthly-spend')
  @RequireScope('account')
  @ApiOperation({ summary: 'Credits charged per UTC calendar month (default the last 6), beside the spend cap' })
  @ApiResponse({ status: 200, type: MonthlySpendResponse })
  @ApiErrorResponses('auth', 'rate', 'invalid')
  monthlySpend(@Caller() caller: AuthContext, @Query() query: MonthlySpendQuery): Promise<MonthlySpend> {
    return this.billing.monthlySpend(caller.accountId, query.months ?? 6);
  }

  @Get('ledger')
  @RequireScope('account')
  @ApiOperation({
    summary: 'Every credit movement (grant, authorise, capture, release), newest first; filter by kind and time',
  })
  @ApiPage(LedgerEntryResponse)
  @ApiErrorResponses('auth', 'rate', 'invalid')
  ledger(@Caller() caller: AuthContext, @Query() query: LedgerQuery): Promise<ListResponse<LedgerEntry>> {
    return this.billing.ledger(caller.accountId, ledgerFilter(query), query.limit, query.starting_after);
  }

  @Get('ledger/export')
  @RequireScope('account')
  @ApiOperation({
    summary: 'The ledger as a CSV download: every entry the same filters keep, newest first, in one file (no paging)',
  })
  @ApiProduces('text/csv')
  @ApiResponse({
    status: 200,
    description:
      'CSV (RFC 4180, CRLF lines): created_at, id, kind, credits, balance_after, reserved_after, job_id, reason. Cells that a spreadsheet would read as a formula start with an apostrophe.',
    content: { 'text/csv': { schema: { type: 'string' } } },
  })
  @ApiErrorResponses('auth', 'rate', 'invalid')
  async exportLedger(
    @Caller() caller: AuthContext,
    @Query() query: LedgerFilterQuery,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const lines = await this.billing.ledgerCsv(caller.accountId, ledgerFilter(query));
    const day = new Date().toISOString().slice(0, 10);
    await reply
      .header('content-type', 'text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="mediajobs-ledger-${caller.accountId}-${day}.csv"`)
      .header('cache-control', 'no-store')
      .send(Readable.from(lines));
  }

  @Post('api-keys')
  @RequireScope('keys')
  @ApiOperation({ summary: 'Create an API key (the full key is shown once, in this response)' })
  @ApiSuccess(201, ApiKeyWithSecretResponse, 'The new key, with its secret (shown only here)')
  @ApiErrorResponses('auth', 'rate', 'invalid')
  createKey(@Caller() caller: AuthContext, @Body() body: CreateApiKeyDto): Promise<ApiKeyView> {
    const expiresAt = body.expires_at ? new Date(body.expires_at) : null;
    return this.keys.create(caller.accountId, body.scopes, expiresAt, caller, undefined, body.name ?? null);
  }

  @Get('api-keys')
  @RequireScope('keys')
  @ApiOperation({ summary: "List the account's API keys (never the keys themselves)" })
  @ApiPage(ApiKeyResponse)
  @ApiErrorResponses('auth', 'rate', 'invalid')
  listKeys(@Caller() caller: AuthContext, @Query() query: ListQuery): Promise<ListResponse<ApiKeyView>> {
    return this.keys.list(caller.accountId, query.limit, query.starting_after);
  }

  @Delete('api-keys/:id')
  @RequireScope('keys')
  @ApiOperation({ summary: 'Revoke an API key (revoked_api_key from then on, on every instance)' })
  @ApiSuccess(200, ApiKeyResponse, 'The revoked key')
  @ApiErrorResponses('auth', 'rate', 'missing')
  revokeKey(@Caller() caller: AuthContext, @Param('id') id: string): Promise<ApiKeyView> {
    return this.keys.revoke(caller, id);
  }

  @Post('api-keys/:id/rotate')
  @HttpCode(201)
  @RequireScope('keys')
  @ApiOperation({
    summary: 'Replace a key with a new one of the same scopes; the old one is revoked after an optional grace',
  })
  @ApiSuccess(201, ApiKeyWithSecretResponse, 'The new key, with its secret (shown only here)')
  @ApiErrorResponses('auth', 'rate', 'invalid', 'missing')
  rotateKey(
    @Caller() caller: AuthContext,
    @Param('id') id: string,
    @Body() body: RotateApiKeyDto,
  ): Promise<ApiKeyView> {
    return this.keys.rotate(caller, id, body.grace_seconds ?? 0, body.name);
  }
}
