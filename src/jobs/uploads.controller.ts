import { Controller, Post, Req, Res } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiOperation, ApiQuery, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
import type { AuthContext } from '../auth/auth-context';
import { Caller, RequireScope } from '../auth/auth.decorators';
import { ApiError } from '../common/errors';
import { closeAfterDraining } from '../common/http/refused-body';
import { ApiErrorResponses } from '../common/openapi/api-error-responses';
import { ApiSuccess } from '../common/openapi/api-success';
import { UploadResponse } from './dto/job.response';
import { uploadFilename, UploadsService, type UploadView } from './uploads.service';

export const UPLOAD_CONTENT_TYPES = ['application/octet-stream', 'video/*', 'audio/*'];

@ApiTags('uploads')
@ApiSecurity('api_key')
@Controller('v1/uploads')
export class UploadsController {
  constructor(private readonly uploads: UploadsService) {}

  @Post()
  // Uploads feed either API; a key with either scope may upload.
  @RequireScope('sdr2hdr', 'audio')
  @ApiConsumes(...UPLOAD_CONTENT_TYPES)
  @ApiQuery({
    name: 'filename',
    required: false,
    example: 'sunset-trailer.mp4',
    description:
      "The file's name as you know it (1–255 characters, no control characters): the upload, its jobs' " +
      'items[i].source.filename and the dashboard show it instead of the upload id.',
  })
  @ApiBody({ description: 'The raw media file', schema: { type: 'string', format: 'binary' } })
  @ApiOperation({
    summary: 'Upload a media file as the raw request body (streamed; returns upload_id and SHA-256)',
    description:
      "An upload is kept 24 h. An account holds at most its plan's bytes in live uploads (free 1 GiB, starter " +
      '10 GiB, pro 100 GiB, enterprise 500 GiB): an upload that would pass it is 429 `quota_exceeded` with ' +
      '`details.upload_bytes_limit` and `upload_bytes_used`, and nothing is stored.',
  })
  @ApiSuccess(201, UploadResponse, 'The upload: reference upload_id in a job')
  @ApiErrorResponses('auth', 'rate', 'upload')
  async create(
    @Caller() caller: AuthContext,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<UploadView> {
    const body = request.body as Readable | undefined;
    if (!body || typeof body.pipe !== 'function') {
      throw new ApiError('unsupported_content_type', {
        param: 'Content-Type',
        message:
          'Send the file as the raw body with a media Content-Type (video/*, audio/* or application/octet-stream).',
      });
    }
    const length = request.headers['content-length'];
    try {
      return await this.uploads.create(
        caller.accountId,
        body,
        request.headers['content-type'] ?? null,
        length ? Number(length) : null,
        uploadFilename((request.query as Record<string, unknown>).filename),
      );
    } catch (error) {
      // The body may be only partly read (over the limit, store down): close the connection after the
      // answer, or the paused socket would stay open until Node's request timeout; drained first, so a
      // client still sending reads its answer rather than a reset.
      if (!body.readableEnded) closeAfterDraining(reply);
      throw error;
    }
  }
}
