// The estimate's response (POST /v1/{api}/jobs/estimate): what a submit of the same body would cost and
// make, item by item; its sources are shown as in the job view (job.response.ts).
import { ApiExtraModels, ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import type { ErrorObject } from '../../common/errors';
import { ApiErrorObjectOrNull } from '../../common/openapi/api-success';
import { JOB_APIS } from '../job.types';
import { EstimateRungResponse } from './estimate-rung.response';
import { UploadSourceResponse, UrlSourceResponse } from './job.response';

/** An estimate's input described by `inputs[i].media` (a file not sent yet): nothing to point at. */
export class DeclaredSourceResponse {
  @ApiProperty({ enum: ['declared'] }) type: 'declared';
}

/** An estimate's source: as in the job view, or `declared` for a file described by `media` (not sent). */
const ApiEstimateItemSource = () =>
  ApiProperty({
    oneOf: [
      { $ref: getSchemaPath(UrlSourceResponse) },
      { $ref: getSchemaPath(UploadSourceResponse) },
      { $ref: getSchemaPath(DeclaredSourceResponse) },
    ],
    discriminator: {
      propertyName: 'type',
      mapping: {
        url: getSchemaPath(UrlSourceResponse),
        upload: getSchemaPath(UploadSourceResponse),
        declared: getSchemaPath(DeclaredSourceResponse),
      },
    },
  });

@ApiExtraModels(UrlSourceResponse, UploadSourceResponse, DeclaredSourceResponse)
export class JobEstimateItemResponse {
  @ApiProperty({ type: 'integer', example: 0 }) index: number;
  @ApiEstimateItemSource() source: UrlSourceResponse | UploadSourceResponse | DeclaredSourceResponse;
  @ApiProperty({ example: 12.5 }) duration_seconds: number;
  @ApiProperty({ type: 'integer', nullable: true, example: 1920 }) width: number | null;
  @ApiProperty({ type: 'integer', nullable: true, example: 1080 }) height: number | null;
  @ApiProperty({
    type: 'integer',
    nullable: true,
    example: 1920,
    description:
      'Width of the picture this item produces: output.resolution on the short side, never upscaled (a smaller source keeps its size). ' +
      "For a package (output.package `hls`), the top rung's picture: its highest HDR rendition. null for audio.",
  })
  output_width: number | null;
  @ApiProperty({
    type: 'integer',
    nullable: true,
    example: 1080,
    description:
      'Height of the picture this item produces: output.resolution on the short side, never upscaled (a smaller source keeps its size). ' +
      "For a package (output.package `hls`), the top rung's picture: its highest HDR rendition. null for audio.",
  })
  output_height: number | null;
  @ApiProperty({ type: 'integer', example: 13 }) estimated_credits: number;
  @ApiProperty({ example: 0.08 }) estimated_usd: number;
  @ApiProperty({
    example: 21.4,
    description:
      'Processing time of this item on one idle worker. For a package, the work of every rung it encodes: each ' +
      "rung's pixels × seconds at its codec's measured speed (AV1 rungs cost about 1.5× an HEVC rung of the same size, " +
      'H.264 ones about 0.4×; API guide, "Processing time").',
  })
  estimated_seconds: number;
  @ApiPropertyOptional({
    type: [EstimateRungResponse],
    description:
      'Package `hls` only (absent for a file): the renditions this item will get, highest first per codec, each ' +
      "priced as a picture of its size; estimated_credits is their sum, output_width/height the top rung's.",
  })
  rungs?: EstimateRungResponse[];
}

export class JobEstimateResponse {
  @ApiProperty({ enum: ['job_estimate'] }) object: 'job_estimate';
  @ApiProperty({ enum: JOB_APIS, example: 'sdr2hdr' }) api: string;
  @ApiProperty({ example: 'eu-west' }) region: string;
  @ApiProperty({ type: 'integer', example: 13 }) estimated_credits: number;
  @ApiProperty({ example: 0.08, description: "The credits at the account's price, rounded to the cent." })
  estimated_usd: number;
  @ApiProperty({ example: 0.006 }) usd_per_credit: number;
  @ApiProperty({
    example: 21.4,
    description:
      "Processing time of the whole job once workers start it, in seconds: its items run in parallel on the region's " +
      'live workers, each taking the next item when it is free (one worker: the sum of the items; a worker per item: ' +
      "the longest item). An sdr2hdr item at least twice the service's segment length long counts as its segments, " +
      'which run in parallel the same way, plus the split and the join. Time waiting in the queue behind other jobs is not counted.',
  })
  estimated_seconds: number;
  @ApiProperty({ example: 12.5, description: 'Seconds of media in all inputs.' }) duration_seconds: number;
  @ApiProperty({ type: [JobEstimateItemResponse] }) items: JobEstimateItemResponse[];
  @ApiProperty({
    example: true,
    description:
      'Whether a submit of the same body would be accepted now and its job could run: false too for a picture ' +
      'over the workers’ budget, which the submit accepts and the job then fails as out_of_memory (charged 0).',
  })
  accepted: boolean;
  @ApiErrorObjectOrNull(
    'When not accepted: the error object the submit would get now, or the out_of_memory its job would end with; else null.',
  )
  error: ErrorObject | null;
}
