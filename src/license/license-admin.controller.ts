import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { AdminOnly } from '../auth/auth.decorators';
import { ApiErrorResponses } from '../common/openapi/api-error-responses';
import { ApiSuccess } from '../common/openapi/api-success';
import { AdminLicenseResponse, AdminLicenseWithKeyResponse, CreateLicenseDto } from './dto/license.dto';
import { LicenseAdminService, type LicenseAdminView } from './license-admin.service';

@ApiTags('admin')
@ApiSecurity('admin_token')
@AdminOnly()
@Controller('v1/admin/licenses')
export class LicenseAdminController {
  constructor(private readonly licenses: LicenseAdminService) {}

  @Post()
  @ApiOperation({ summary: 'Issue a plugin licence (the mjl_ key is shown once, in this response)' })
  @ApiSuccess(201, AdminLicenseWithKeyResponse, 'The licence, with its key (shown only here)')
  @ApiErrorResponses('admin', 'invalid', 'missing')
  create(@Body() body: CreateLicenseDto): Promise<LicenseAdminView> {
    return this.licenses.create({
      accountId: body.account_id,
      maxDevices: body.max_devices,
      expiresAt: body.expires_at,
      offlineGraceSeconds: body.offline_grace_seconds,
      plan: body.plan,
    });
  }

  @Get(':id')
  @ApiOperation({ summary: 'Read a licence (never its key) and its active device count' })
  @ApiSuccess(200, AdminLicenseResponse, 'The licence')
  @ApiErrorResponses('admin', 'missing')
  get(@Param('id') id: string): Promise<LicenseAdminView> {
    return this.licenses.get(id);
  }

  @Post(':id/revoke')
  @HttpCode(200)
  @ApiOperation({ summary: 'Revoke a licence: its key answers license_invalid from now on' })
  @ApiSuccess(200, AdminLicenseResponse, 'The licence, revoked')
  @ApiErrorResponses('admin', 'missing')
  revoke(@Param('id') id: string): Promise<LicenseAdminView> {
    return this.licenses.revoke(id);
  }
}
