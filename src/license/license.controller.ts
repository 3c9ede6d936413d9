import { Body, Controller, Get, Headers, HttpCode, Post } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Public } from '../auth/auth.decorators';
import { ApiErrorResponses } from '../common/openapi/api-error-responses';
import { ApiSuccess } from '../common/openapi/api-success';
import {
  ActivateLicenseDto,
  LicenseActivationResponse,
  LicenseDeactivationResponse,
  LicenseDeviceDto,
  LicenseEntitlementsResponse,
  PublicJwkResponse,
} from './dto/license.dto';
import type { Ed25519PublicJwk } from './license-token';
import {
  LicenseService,
  type LicenseActivationView,
  type LicenseDeactivationView,
  type LicenseEntitlementsView,
} from './license.service';

/** The plugin's licence endpoints (docs/api-decisions.md §7): no API key; the licence key or token is the credential. */
@ApiTags('license')
@Public()
@Controller('v1/license')
export class LicenseController {
  constructor(private readonly licenses: LicenseService) {}

  @Post('activate')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Activate a device (takes a seat; an already active device keeps its seat) and get a token',
  })
  @ApiSuccess(200, LicenseActivationResponse, 'The activation and a signed token')
  @ApiErrorResponses('invalid', 'license')
  activate(@Body() body: ActivateLicenseDto): Promise<LicenseActivationView> {
    return this.licenses.activate({
      licenseKey: body.license_key,
      deviceId: body.device_id,
      deviceName: body.device_name,
    });
  }

  @Post('validate')
  @HttpCode(200)
  @ApiOperation({ summary: 'Validate an activated device online and get a fresh token' })
  @ApiSuccess(200, LicenseActivationResponse, 'The activation and a fresh token')
  @ApiErrorResponses('invalid', 'license')
  validate(@Body() body: LicenseDeviceDto): Promise<LicenseActivationView> {
    return this.licenses.validate({ licenseKey: body.license_key, deviceId: body.device_id });
  }

  @Post('deactivate')
  @HttpCode(200)
  @ApiOperation({ summary: 'Deactivate a device, freeing its seat' })
  @ApiSuccess(200, LicenseDeactivationResponse, 'The device, deactivated')
  @ApiErrorResponses('invalid', 'license')
  deactivate(@Body() body: LicenseDeviceDto): Promise<LicenseDeactivationView> {
    return this.licenses.deactivate({ licenseKey: body.license_key, deviceId: body.device_id });
  }

  @Get()
  @ApiOperation({ summary: "The licence's entitlements for a token from activate or validate" })
  @ApiSuccess(200, LicenseEntitlementsResponse, 'What the token entitles to, as the service sees it now')
  @ApiHeader({ name: 'X-License-Token', required: true, description: 'The token from activate or validate.' })
  @ApiErrorResponses('invalid', 'license')
  entitlements(@Headers('x-license-token') token: string | undefined): Promise<LicenseEntitlementsView> {
    return this.licenses.entitlements(token);
  }

  @Get('public-key')
  @ApiOperation({ summary: 'The Ed25519 public key (JWK) that verifies licence tokens offline' })
  @ApiSuccess(200, PublicJwkResponse, 'The public key as a JWK (RFC 8037)')
  publicKey(): Ed25519PublicJwk {
    return this.licenses.publicKey();
  }
}
