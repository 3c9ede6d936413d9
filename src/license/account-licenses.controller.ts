import { Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiOperation, ApiProperty, ApiResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { AuthContext } from '../auth/auth-context';
import { Caller, RequireScope } from '../auth/auth.decorators';
import { ApiErrorResponses } from '../common/openapi/api-error-responses';
import { AccountLicensesService, type AccountLicenseView, type LicenseDeviceView } from './account-licenses.service';

class LicenseDeviceResponse {
  @ApiProperty({ enum: ['license_device'] }) object: 'license_device';
  @ApiProperty({ example: 'act_0Qx3cA1b2C3d4E5f6G7h8i9' }) activation_id: string;
  @ApiProperty({ example: 'host-7f3a9c' }) device_id: string;
  @ApiProperty({ nullable: true, type: String, example: 'Studio workstation' }) name: string | null;
  @ApiProperty({ format: 'date-time' }) first_seen_at: string;
  @ApiProperty({ format: 'date-time', description: 'The last activation or online validation.' }) last_seen_at: string;
}

class DeactivatedDeviceResponse extends LicenseDeviceResponse {
  @ApiProperty({ format: 'date-time' }) deactivated_at: string;
}

class AccountLicenseResponse {
  @ApiProperty({ enum: ['license'] }) object: 'license';
  @ApiProperty({ example: 'lic_0Qx3cA1b2C3d4E5f6G7h8i9' }) id: string;
  @ApiProperty({ example: 'mjl_4Vq8ZrT2', description: 'The first characters of the key; the key is never shown.' })
  key_prefix: string;
  @ApiProperty({ example: 'standard' }) plan: string;
  @ApiProperty({ enum: ['active', 'expired', 'revoked'] }) status: string;
  @ApiProperty({ example: 3 }) max_devices: number;
  @ApiProperty({ example: 2 }) active_devices: number;
  @ApiProperty({ format: 'date-time' }) expires_at: string;
  @ApiProperty({ example: 604800 }) offline_grace_seconds: number;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) revoked_at: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ type: [LicenseDeviceResponse], description: 'The devices holding a seat now.' })
  devices: LicenseDeviceResponse[];
}

class AccountLicenseListResponse {
  @ApiProperty({ enum: ['list'] }) object: 'list';
  @ApiProperty({ type: [AccountLicenseResponse] }) data: AccountLicenseResponse[];
  @ApiProperty({ example: false }) has_more: boolean;
  @ApiProperty({ nullable: true, type: String, example: null }) next_cursor: string | null;
}

@ApiTags('licenses')
@ApiSecurity('api_key')
@RequireScope('account')
@Controller('v1/account/licenses')
export class AccountLicensesController {
  constructor(private readonly licenses: AccountLicensesService) {}

  @Get()
  @ApiOperation({ summary: "The account's plugin licences with their activated devices (name, last seen)" })
  @ApiResponse({ status: 200, type: AccountLicenseListResponse })
  @ApiErrorResponses('auth', 'rate')
  list(@Caller() caller: AuthContext): Promise<{ object: 'list'; data: AccountLicenseView[] }> {
    return this.licenses.list(caller.accountId);
  }

  @Post(':license_id/devices/:activation_id/deactivate')
  @HttpCode(200)
  @ApiOperation({ summary: 'Deactivate a device: frees its seat (its next validation answers device_not_activated)' })
  @ApiResponse({ status: 200, type: DeactivatedDeviceResponse })
  @ApiErrorResponses('auth', 'rate', 'missing')
  deactivate(
    @Caller() caller: AuthContext,
    @Param('license_id') licenseId: string,
    @Param('activation_id') activationId: string,
  ): Promise<LicenseDeviceView> {
    return this.licenses.deactivate(caller.accountId, licenseId, activationId);
  }
}
