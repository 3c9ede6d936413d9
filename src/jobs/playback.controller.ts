// Plays an HLS package: its master playlist, media playlists and segments, each reached through the one
// signed token of the job view's `playlist_url` (playback-token.ts). No API key: the token is the credential.
import { Controller, Get, Inject, Param, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DataSource } from 'typeorm';
import { PlaybackAccess } from '../auth/auth.decorators';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { row } from '../common/database/sql';
import { ApiError } from '../common/errors';
import { STORAGE, type Storage } from '../common/storage/storage';
import { ApiErrorResponses } from '../common/openapi/api-error-responses';
import {
  isPackageFilePath,
  PACKAGE_CONTAINER,
  PACKAGE_CONTENT_TYPES,
  packageCacheControl,
  packageFileKey,
  packageFileKind,
  type PackageFileKind,
} from './package-files';
import { verifyPlaybackToken } from './playback-token';
import { sendStoredObject } from './stored-object-reply';

const PACKAGE_CONTENT = Object.fromEntries(
  [...new Set(Object.values(PACKAGE_CONTENT_TYPES))].map((type) => [type, { schema: { type: 'string' } }]),
);
const TOKEN_PARAM = {
  name: 'token',
  description: 'The playback token of the job view\u2019s `playlist_url`: `<asset_id>.<expires>.<signature>`',
};

@ApiTags('assets')
@Controller('v1/playback')
export class PlaybackController {
  constructor(
    private readonly db: DataSource,
    @Inject(STORAGE) private readonly storage: Storage,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get(':token/:file')
  @PlaybackAccess()
  @ApiOperation({
    summary: 'Play an HLS package: its master playlist (`master.m3u8`), through the signed token of `playlist_url`',
  })
  @ApiParam(TOKEN_PARAM)
  @ApiParam({ name: 'file', description: 'A file at the top of the package: `master.m3u8`' })
  @ApiResponse({ status: 200, description: 'The file', content: PACKAGE_CONTENT })
  @ApiResponse({ status: 206, description: 'The byte range asked for with Range', content: PACKAGE_CONTENT })
  @ApiErrorResponses('rate', 'asset')
  top(
    @Param('token') token: string,
    @Param('file') file: string,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    return this.serve(token, file, request, reply);
  }

  @Get(':token/:rendition/:file')
  @PlaybackAccess()
  @ApiOperation({
    summary: 'Play an HLS package: a rendition\u2019s playlist, init segment or media segment (Range supported)',
  })
  @ApiParam(TOKEN_PARAM)
  @ApiParam({
    name: 'rendition',
    description: 'A rendition\u2019s folder, e.g. `h264-720-sdr`, `hevc-1080-pq`, `audio`',
  })
  @ApiParam({ name: 'file', description: '`playlist.m3u8`, `init.mp4` or `seg-00000.m4s`…' })
  @ApiResponse({ status: 200, description: 'The file', content: PACKAGE_CONTENT })
  @ApiResponse({ status: 206, description: 'The byte range asked for with Range', content: PACKAGE_CONTENT })
  @ApiErrorResponses('rate', 'asset')
  nested(
    @Param('token') token: string,
    @Param('rendition') rendition: string,
    @Param('file') file: string,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    return this.serve(token, `${rendition}/${file}`, request, reply);
  }

  /**
   * Everything that costs nothing first: the token's signature and expiry, then the path's shape (a name a
   * package file has: package-files.ts), so a forged token or a probing path never reaches the database or
   * storage; only then the package's row, then the object.
   */
  private async serve(token: string, path: string, request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const grant = verifyPlaybackToken(token, this.config.assetUrlSecret);
    if (!grant) {
      throw new ApiError('asset_not_found', {
        param: 'token',
        message: 'This playback link is not valid or has expired: read the job again for a fresh playlist_url.',
      });
    }
    const kind = packageFileKind(path);
    const notAFile = () =>
      new ApiError('invalid_parameter', {
        param: 'path',
        message:
          'Not a file of a package: ask for master.m3u8 or <rendition>/<file> (playlist.m3u8, init.mp4 or seg-NNNNN.m4s).',
      });
    if (!kind || !isPackageFilePath(path)) throw notAFile();
    // expires_at > now(): a package past its retention stops here at once, not when the hourly purge marks it deleted.
    const asset = await row<{ storage_key: string; retained_until: number }>(
      this.db,
      `SELECT storage_key, extract(epoch FROM expires_at)::float8 AS retained_until FROM assets
        WHERE id = $1 AND container = $2 AND deleted_at IS NULL AND expires_at > now()`,
      [grant.assetId, PACKAGE_CONTAINER],
    );
    if (!asset) {
      throw new ApiError('asset_not_found', {
        param: 'token',
        message: 'The package does not exist, was deleted, or has passed retention.',
      });
    }
    const key = packageFileKey(asset.storage_key, path);
    if (!key) throw notAFile();
    // A cache may keep a file until the token or the package's retention ends, whichever is first.
    await this.send(key, kind, Math.min(grant.expires, asset.retained_until), request, reply);
  }

  /** One object of the package: its size first (Content-Length, Range), then its bytes. */
  private async send(
    key: string,
    kind: PackageFileKind,
    /** Epoch seconds after which no cache may serve the file. */
    expires: number,
    request: FastifyRequest,
    reply: FastifyReply,
  ): Promise<void> {
    const missing = new ApiError('asset_not_found', {
      param: 'path',
      message: 'The package has no such file.',
    });
    const size = await this.storage.size(key);
    if (size === null) throw missing;
    return sendStoredObject(this.storage, key, size, request, reply, {
      contentType: PACKAGE_CONTENT_TYPES[kind],
      missing,
      cacheControl: packageCacheControl(kind, expires - Date.now() / 1000),
    });
  }
}
