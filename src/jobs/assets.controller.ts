import { Controller, Get, Inject, Param, Query, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DataSource } from 'typeorm';
import { Public } from '../auth/auth.decorators';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { row } from '../common/database/sql';
import { ApiError } from '../common/errors';
import { STORAGE, type Storage } from '../common/storage/storage';
import { ApiErrorResponses } from '../common/openapi/api-error-responses';
import { verifyAssetSignature } from './asset-url';
import { sendStoredObject } from './stored-object-reply';
import { OUTPUT_CONTENT_TYPES } from './output-options';

/** What an output is served as (the container chosen at submit), and an sdr2hdr output's light map (PNG). */
const MEDIA_CONTENT = Object.fromEntries(
  [...Object.values(OUTPUT_CONTENT_TYPES), 'image/png'].map((type) => [
    type,
    { schema: { type: 'string', format: 'binary' } },
  ]),
);

@ApiTags('assets')
@Controller('v1/assets')
export class AssetsController {
  constructor(
    private readonly db: DataSource,
    @Inject(STORAGE) private readonly storage: Storage,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Reached through the signed link in a job view: the signature is the credential. */
  @Get(':asset_id/content')
  @Public()
  @ApiOperation({
    summary: 'Download an output or its light map (signed, expiring link from the job view; Range supported)',
  })
  @ApiQuery({ name: 'expires', required: true })
  @ApiQuery({ name: 'signature', required: true })
  @ApiResponse({ status: 200, description: 'The whole file', content: MEDIA_CONTENT })
  @ApiResponse({ status: 206, description: 'The byte range asked for with Range', content: MEDIA_CONTENT })
  @ApiErrorResponses('rate', 'asset')
  async content(
    @Param('asset_id') assetId: string,
    @Query('expires') expires: string | undefined,
    @Query('signature') signature: string | undefined,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const gone = new ApiError('asset_not_found', {
      param: 'asset_id',
      message: 'The asset does not exist, was deleted, or this link has expired.',
    });
    if (!expires || !signature || !verifyAssetSignature(assetId, expires, signature, this.config.assetUrlSecret))
      throw gone;
    const asset = await row<{ storage_key: string; content_type: string; size_bytes: string }>(
      this.db,
      `SELECT storage_key, content_type, size_bytes FROM assets WHERE id = $1 AND deleted_at IS NULL AND expires_at > now()`,
      [assetId],
    );
    if (!asset) throw gone;
    // The row knows the size, so a download costs one request to the store (the read itself).
    return sendStoredObject(this.storage, asset.storage_key, Number(asset.size_bytes), request, reply, {
      contentType: asset.content_type,
      missing: gone,
    });
  }
}
