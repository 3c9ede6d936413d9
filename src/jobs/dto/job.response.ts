// Success bodies of the job and upload routes, for the OpenAPI document (job-view.ts builds them).
import { ApiExtraModels, ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { ApiErrorObjectOrNull } from '../../common/openapi/api-success';
import { QUALITY_CHOICES } from '../../media/quality-presets';
import { MAPPINGS } from '../../media/hdr-mapping';
import type { ErrorObject } from '../../common/errors';
import { AUDIO_CONTAINERS, VIDEO_CONTAINERS } from '../output-options';
import {
  MeasuredAudioFields,
  MeasuredVideoFields,
  OutputCheckResponse,
} from '../../common/openapi/measured-output.response';
import {
  ITEM_PHASES,
  JOB_APIS,
  JOB_STATUSES,
  type BillingState,
  type ItemPhase,
  type ItemStatus,
  type JobStatus,
} from '../job.types';
import { RenditionResponse } from './rendition.response';

const ITEM_STATUSES = Object.keys({
  queued: 0,
  processing: 0,
  succeeded: 0,
  failed: 0,
  cancelled: 0,
} satisfies Record<ItemStatus, 0>);
const BILLING_STATES = Object.keys({ authorised: 0, settled: 0, released: 0 } satisfies Record<BillingState, 0>);

export class UrlSourceResponse {
  @ApiProperty({ enum: ['url'] }) type: 'url';
  @ApiProperty({ format: 'uri', example: 'https://media.example.com/clips/intro.mp4' }) url: string;
  @ApiProperty({ type: String, nullable: true, example: null, description: 'Always null: a URL has no upload name.' })
  filename: null;
}

export class UploadSourceResponse {
  @ApiProperty({ enum: ['upload'] }) type: 'upload';
  @ApiProperty({ example: 'upl_0Qx3cA1b2C3d4E5f6G7h8i9' }) upload_id: string;
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'sunset-trailer.mp4',
    description: 'The name the upload was given (POST /v1/uploads?filename=…); null when it had none.',
  })
  filename: string | null;
}

/** An item's source: a URL or an upload (one of the two shapes, told apart by `type`). */
const ApiItemSource = () =>
  ApiProperty({
    oneOf: [{ $ref: getSchemaPath(UrlSourceResponse) }, { $ref: getSchemaPath(UploadSourceResponse) }],
    discriminator: {
      propertyName: 'type',
      mapping: { url: getSchemaPath(UrlSourceResponse), upload: getSchemaPath(UploadSourceResponse) },
    },
  });

export class OutputLightResponse {
  @ApiProperty({ enum: MAPPINGS, example: 'expand', description: 'Where the SDR light went (output.mapping).' })
  mapping: string;
  @ApiProperty({
    type: Number,
    nullable: true,
    example: 1000,
    description: 'ST 2086 mastering display peak (cd/m²); null for HLG.',
  })
  mastering_peak_nits: number | null;
  @ApiProperty({
    type: 'integer',
    nullable: true,
    example: 987,
    description:
      "MaxCLL (cd/m²): the decoded picture's brightest pixel, max(R,G,B), over the whole item; null for HLG.",
  })
  max_cll: number | null;
  @ApiProperty({
    type: 'integer',
    nullable: true,
    example: 212,
    description: 'MaxFALL (cd/m²): the brightest frame-average of max(R,G,B) over the whole item; null for HLG.',
  })
  max_fall: number | null;
}

export class VideoOutputMediaResponse extends MeasuredVideoFields {
  @ApiProperty({ enum: ['hevc'] }) codec: 'hevc';
  @ApiProperty({ enum: ['main10'] }) profile: 'main10';
  @ApiProperty({ type: 'integer', example: 1920 }) width: number;
  @ApiProperty({ type: 'integer', example: 1080 }) height: number;
  @ApiProperty({ enum: ['HDR10', 'HLG'] }) hdr: 'HDR10' | 'HLG';
  @ApiProperty({ enum: ['smpte2084', 'arib-std-b67'] }) transfer: 'smpte2084' | 'arib-std-b67';
  @ApiProperty({ enum: ['bt2020'] }) primaries: 'bt2020';
  @ApiPropertyOptional({ enum: QUALITY_CHOICES, example: 'balanced', description: 'Absent on jobs made before it.' })
  quality?: string;
  @ApiPropertyOptional({
    type: OutputLightResponse,
    description: 'Where the light went and how bright the picture is, measured. Absent on jobs made before it.',
  })
  light?: OutputLightResponse;
}

export class AudioOutputMediaResponse extends MeasuredAudioFields {
  @ApiProperty({ type: Number, nullable: true, example: -16, description: 'Integrated loudness of the output (LUFS).' })
  integrated_lufs: number | null;
  @ApiProperty({
    type: Number,
    nullable: true,
    example: -1.5,
    description: 'True peak of the output (dBTP, EBU R128 meter).',
  })
  true_peak_dbtp: number | null;
  @ApiProperty({ type: Number, nullable: true, example: -23.4 }) input_integrated_lufs: number | null;
  @ApiProperty({ type: Number, nullable: true, example: 41.2, description: 'Seconds of detected speech.' })
  speech_seconds: number | null;
}

export class ItemOutputResponse {
  @ApiProperty({ example: 'ast_0Qx3cA1b2C3d4E5f6G7h8i9' }) asset_id: string;
  @ApiProperty({ type: 'integer', example: 48213377 }) size_bytes: number;
  @ApiProperty({ enum: [...VIDEO_CONTAINERS, ...AUDIO_CONTAINERS, 'hls'], example: 'mp4' }) container: string;
  @ApiPropertyOptional({ type: VideoOutputMediaResponse, description: 'sdr2hdr outputs.' })
  video?: VideoOutputMediaResponse;
  @ApiPropertyOptional({
    type: [RenditionResponse],
    description: 'sdr2hdr outputs packaged as HLS (`output.package: hls`): every rendition, measured.',
  })
  renditions?: RenditionResponse[];
  @ApiPropertyOptional({ type: AudioOutputMediaResponse, description: 'audio outputs.' })
  audio?: AudioOutputMediaResponse;
  @ApiProperty({
    format: 'uri',
    example:
      'https://api.mediajobs.example/v1/assets/ast_0Qx3cA1b2C3d4E5f6G7h8i9/content?expires=1767000000&signature=3q2-7w',
    description:
      'Signed download link, no API key needed; valid until expires_at (ask for the job again for a new one).',
  })
  url: string;
  @ApiProperty({ format: 'date-time' }) expires_at: string;
  @ApiPropertyOptional({
    type: String,
    format: 'uri',
    nullable: true,
    example:
      'https://api.mediajobs.example/v1/assets/ast_7Lm2pQ9rS4tU6vW8xY0zA1b2/content?expires=1767000000&signature=Xk4-9d',
    description:
      'sdr2hdr outputs: signed link to a PNG — a frame near the middle of the source (at light_map_frame_seconds) beside the same output frame as a ' +
      'false-colour luminance map (cd/m² bands, legend below), to see on an SDR screen where the light went. ' +
      'Valid until light_map_expires_at; null when none could be made (the output itself is unaffected).',
  })
  light_map_url?: string | null;
  @ApiPropertyOptional({ type: String, format: 'date-time', nullable: true }) light_map_expires_at?: string | null;
  @ApiPropertyOptional({
    type: Number,
    nullable: true,
    example: 4.171,
    description:
      'sdr2hdr outputs: the time of the frame the light map shows, in seconds from the start of the item (a keyframe ' +
      'near the middle); null when there is no light map.',
  })
  light_map_frame_seconds?: number | null;
  @ApiPropertyOptional({
    format: 'uri',
    example:
      'https://api.mediajobs.example/v1/playback/ast_0Qx3cA1b2C3d4E5f6G7h8i9.1767000000.3q2-7wXk4-9d/master.m3u8',
    description:
      'HLS packages: the master playlist under a signed token that covers every playlist and segment of the package ' +
      '(no API key needed; its relative URIs keep the token). Also given as `url`. Valid until playlist_expires_at.',
  })
  playlist_url?: string;
  @ApiPropertyOptional({ format: 'date-time' }) playlist_expires_at?: string;
}

export class ItemWarningResponse {
  @ApiProperty({
    enum: ['source_shorter_than_declared'],
    example: 'source_shorter_than_declared',
    description: 'Stable machine-readable name of the warning.',
  })
  code: 'source_shorter_than_declared';
  @ApiProperty({
    example:
      'The source decoded to 9.4 s of the 10.0 s its container declares (its end is missing or unreadable); the output lasts what was decoded, and only that was charged.',
    description: 'English sentence; may be reworded, never to be parsed.',
  })
  message: string;
}

@ApiExtraModels(UrlSourceResponse, UploadSourceResponse)
export class JobItemResponse {
  @ApiProperty({ type: 'integer', example: 0, description: 'Position in the submitted inputs.' }) index: number;
  @ApiProperty({ enum: ITEM_STATUSES, example: 'succeeded' }) status: ItemStatus;
  @ApiItemSource() source: UrlSourceResponse | UploadSourceResponse;
  @ApiProperty({
    example: 12.5,
    description:
      'Duration of the source as its container declares it (where its packets end, when that is later), from its probe: what was priced and held.',
  })
  duration_seconds: number;
  @ApiProperty({
    type: Number,
    nullable: true,
    example: 12.5,
    description:
      'What the source decoded to — the seconds encoded and charged; null until the item succeeded. Shorter than duration_seconds by more than 0.1 s adds a warning; by more than 1 s the source is truncated or corrupt and the item fails invalid_media, charged 0.',
  })
  decoded_duration_seconds: number | null;
  @ApiProperty({
    type: [ItemWarningResponse],
    description: 'What the client should know about an item although it succeeded; empty when nothing.',
  })
  warnings: ItemWarningResponse[];
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
  @ApiProperty({ type: 'integer', example: 13 }) charged_credits: number;
  @ApiProperty({ type: ItemOutputResponse, nullable: true, description: 'Set when the item succeeded.' })
  output: ItemOutputResponse | null;
  @ApiProperty({
    type: [OutputCheckResponse],
    description:
      "The output's checks, measured from the file as the item ended; empty until then. An item whose output " +
      'failed one is failed with output_check_failed and charged 0.',
  })
  checks: OutputCheckResponse[];
  @ApiErrorObjectOrNull('Why this item failed; null otherwise.') error: ErrorObject | null;
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'wkr_9f2c41d7',
    description: 'An opaque id of the worker that ran the item; null until a worker takes it.',
  })
  worker: string | null;
  @ApiProperty({
    enum: ITEM_PHASES,
    nullable: true,
    example: 'encoding',
    description:
      'What the item is doing while it is processing: `encoding` (progress moves), then, for a long item encoded in segments, `joining` them, then `storing` the output. The progress stands still while an item joins or stores. null while queued and once ended.',
  })
  phase: ItemPhase | null;
}

export class JobBillingResponse {
  @ApiProperty({ type: 'integer', example: 13, description: 'Held at submit.' }) estimated_credits: number;
  @ApiProperty({
    type: 'integer',
    example: 13,
    description:
      "Charged when the job ended (0 until then): the succeeded items' charges (a cancelled job: those delivered before the cancel).",
  })
  charged_credits: number;
  @ApiProperty({ example: false, description: 'True when the hold was released without a charge.' })
  refunded: boolean;
  @ApiProperty({
    enum: BILLING_STATES,
    example: 'settled',
    description: 'authorised: credits held; settled: charged; released: returned.',
  })
  state: BillingState;
}

export class JobResponse {
  @ApiProperty({ enum: ['job'] }) object: 'job';
  @ApiProperty({ example: 'job_0Qx3cA1b2C3d4E5f6G7h8i9' }) job_id: string;
  @ApiProperty({ enum: JOB_APIS, example: 'sdr2hdr' }) api: string;
  @ApiProperty({ enum: JOB_STATUSES, example: 'succeeded' }) status: JobStatus;
  @ApiProperty({ example: 'eu-west' }) region: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) started_at: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) finished_at: string | null;
  @ApiProperty({ minimum: 0, maximum: 1, example: 1, description: 'Fraction done, 0 to 1.' }) progress: number;
  @ApiProperty({ type: [JobItemResponse] }) items: JobItemResponse[];
  @ApiProperty({ type: JobBillingResponse }) billing: JobBillingResponse;
  @ApiErrorObjectOrNull('Why the job failed (the first failed item’s error); null otherwise.')
  error: ErrorObject | null;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    example: { order_id: 'A-1042' },
    description: 'Your key/value strings from the submit, returned as given.',
  })
  metadata: Record<string, string>;
}

export class UploadResponse {
  @ApiProperty({ enum: ['upload'] }) object: 'upload';
  @ApiProperty({ example: 'upl_0Qx3cA1b2C3d4E5f6G7h8i9' }) upload_id: string;
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'sunset-trailer.mp4',
    description: 'The name given as ?filename= on the upload; null when none was.',
  })
  filename: string | null;
  @ApiProperty({ type: 'integer', example: 48213377 }) size_bytes: number;
  @ApiProperty({ example: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' }) sha256: string;
  @ApiProperty({ type: String, nullable: true, example: 'video/mp4' }) content_type: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time', description: 'Reference it in a job before then.' }) expires_at: string;
}
