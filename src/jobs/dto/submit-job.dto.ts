import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { ListQuery } from '../../common/pagination';
import { JOB_STATUSES, type JobStatus } from '../job.types';
import { QUALITY_CHOICES, QUALITY_DESCRIPTION, type Quality } from '../../media/quality-presets';
import { MAPPINGS, TRANSFERS, type Mapping, type Transfer } from '../../media/hdr-mapping';
import { MAPPING_DESCRIPTION, TRANSFER_DESCRIPTION } from '../output-options';
import {
  AUDIO_CONTAINERS,
  HDR_CODECS,
  OUTPUT_DEFAULTS,
  OUTPUT_PACKAGES,
  RESOLUTION_CHOICES,
  VIDEO_CONTAINERS,
  type AudioOutput,
  type HdrCodec,
  type Resolution,
  type Sdr2HdrOutput,
} from '../output-options';
import type { OutputPackage } from '../../media/output-spec';
import {
  onlyWithHls,
  notWithHls,
  validCodecs,
  evenLines,
  distinctHeights,
  noNestedArrays,
  LADDER_DESCRIPTION,
  CODECS_DESCRIPTION,
  PACKAGE_DESCRIPTION,
  RUNG_HEIGHT_DESCRIPTION,
  MIN_RUNG_LINES,
  MAX_RUNG_LINES,
  MAX_RUNGS,
} from './package-rules';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsDefined,
  IsIn,
  IsInt,
  IsNumber,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateBy,
  ValidateNested,
} from 'class-validator';

/** A local file described by the client, so an estimate needs no upload (estimate only). */
export class DeclaredMediaDto {
  @ApiProperty({ example: 8.0, minimum: 0, description: 'Seconds of media.' })
  @IsDefined()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0)
  @Max(10_000_000)
  duration_seconds: number;

  @ApiPropertyOptional({ example: 1920, description: 'Picture width (video; required for sdr2hdr).' })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(100_000)
  width?: number;

  @ApiPropertyOptional({ example: 1080, description: 'Picture height (video; required for sdr2hdr).' })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(100_000)
  height?: number;
}

export class JobInputDto {
  @ApiPropertyOptional({
    example: 'https://media.example.com/clip.mp4',
    description: 'Public http(s) URL (or use upload_id).',
  })
  @IsOptional()
  @IsString()
  @MaxLength(4096)
  @Matches(/^https?:\/\//i, { message: 'source_url must be an http(s) URL' })
  source_url?: string;

  @ApiPropertyOptional({
    example: 'upl_0AbCdEfGh1234567890abcd',
    description: 'An upload from POST /v1/uploads (or use source_url).',
  })
  @IsOptional()
  @IsString()
  @Matches(/^upl_[0-9A-Za-z]{10,40}$/, { message: 'upload_id must be an id returned by POST /v1/uploads' })
  upload_id?: string;

  @ApiPropertyOptional({
    type: DeclaredMediaDto,
    description:
      'Estimate only (POST /v1/{api}/jobs/estimate): a file not uploaded yet, described by its duration and picture size, ' +
      'so a client can learn the price before sending the bytes. A submit refuses it (upload the file and use upload_id).',
  })
  @IsOptional()
  @ValidateNested()
  @Type(() => DeclaredMediaDto)
  media?: DeclaredMediaDto;
}

const RESOLUTION_DESCRIPTION =
  'What the items produce, in lines of the short side (720p: 1280×720 landscape, 720×1280 portrait). Never upscaled: ' +
  'a source smaller than the tier keeps its own size and is priced for the size it produces (2160p from a 1080p ' +
  "source gives 1080p at the 1080p price); `source` keeps the source's size. Sides are always even (4:2:0 needs " +
  "them): a 360×203 source gives 360×202. Prices and the plan's largest output go by the output's pixels, a " +
  "resolution standing for its 16:9 picture's (1080p: 1920×1080 = 2,073,600): a 1080×1920 portrait is 1080p (2 " +
  'credits a second), 11520×720 is 2160p (8, as 3840×2160). Each item of the estimate and of the ' +
  'job says what it will produce: items[i].output_width and output_height.';

/** One HDR rung of a package's ladder (`output.ladder[i]`). */
export class LadderRungDto {
  @ApiProperty({
    example: 1080,
    minimum: MIN_RUNG_LINES,
    maximum: MAX_RUNG_LINES,
    description: RUNG_HEIGHT_DESCRIPTION,
  })
  @IsDefined()
  @IsInt()
  @Min(MIN_RUNG_LINES)
  @Max(MAX_RUNG_LINES)
  @ValidateBy(evenLines)
  height: number;
}

export class Sdr2HdrOutputDto {
  @ApiPropertyOptional({
    enum: RESOLUTION_CHOICES,
    default: OUTPUT_DEFAULTS.sdr2hdr.resolution,
    description: RESOLUTION_DESCRIPTION,
  })
  @IsOptional()
  @IsIn(RESOLUTION_CHOICES)
  @ValidateBy(notWithHls('resolution'))
  resolution?: Resolution;

  @ApiPropertyOptional({
    default: OUTPUT_DEFAULTS.sdr2hdr.peak_nits,
    minimum: 400,
    maximum: 10000,
    description:
      'Mastering display peak luminance (cd/m²): the ST 2086 metadata, and the peak `expand` reaches. ' +
      'PQ only: refused with `transfer: "hlg"` (HLG is relative to the display and has no mastering peak).',
  })
  @IsOptional()
  @IsInt()
  @Min(400)
  @Max(10000)
  @ValidateBy({
    name: 'peakOnlyWithPq',
    validator: {
      validate: (_value: unknown, args) => (args?.object as Sdr2HdrOutputDto | undefined)?.transfer !== 'hlg',
      defaultMessage: () =>
        'peak_nits applies to PQ (HDR10) only; HLG is relative to the display, so an HLG picture has no mastering ' +
        'peak (expand reaches the HLG reference display\'s 1000 cd/m²). Omit peak_nits, or use transfer "pq"',
    },
  })
  peak_nits?: number;

  @ApiPropertyOptional({ enum: MAPPINGS, default: OUTPUT_DEFAULTS.sdr2hdr.mapping, description: MAPPING_DESCRIPTION })
  @IsOptional()
  @IsIn(MAPPINGS)
  mapping?: Mapping;

  @ApiPropertyOptional({
    enum: TRANSFERS,
    default: OUTPUT_DEFAULTS.sdr2hdr.transfer,
    description: TRANSFER_DESCRIPTION,
  })
  @IsOptional()
  @IsIn(TRANSFERS)
  transfer?: Transfer;

  @ApiPropertyOptional({ enum: VIDEO_CONTAINERS, default: OUTPUT_DEFAULTS.sdr2hdr.container })
  @IsOptional()
  @IsIn(VIDEO_CONTAINERS)
  @ValidateBy(notWithHls('container'))
  container?: Sdr2HdrOutput['container'];

  @ApiPropertyOptional({
    enum: QUALITY_CHOICES,
    default: OUTPUT_DEFAULTS.sdr2hdr.quality,
    description: QUALITY_DESCRIPTION,
  })
  @IsOptional()
  @IsIn(QUALITY_CHOICES)
  quality?: Quality;

  @ApiPropertyOptional({
    enum: OUTPUT_PACKAGES,
    default: OUTPUT_DEFAULTS.sdr2hdr.package,
    description: PACKAGE_DESCRIPTION,
  })
  @IsOptional()
  @IsIn(OUTPUT_PACKAGES)
  package?: OutputPackage;

  @ApiPropertyOptional({
    type: [LadderRungDto],
    minItems: 1,
    maxItems: MAX_RUNGS,
    example: [{ height: 1080 }, { height: 720 }, { height: 360 }],
    description: LADDER_DESCRIPTION,
  })
  @IsOptional()
  @ValidateBy(onlyWithHls('ladder'))
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_RUNGS)
  @ValidateBy(noNestedArrays)
  @ValidateBy(distinctHeights)
  @ValidateNested({ each: true })
  @Type(() => LadderRungDto)
  ladder?: LadderRungDto[];

  @ApiPropertyOptional({
    type: [String],
    enum: HDR_CODECS,
    // No schema default: ["hevc"] applies to a package only, and a client sending it back with a file is refused.
    example: ['hevc', 'av1'],
    description: CODECS_DESCRIPTION,
  })
  @IsOptional()
  @ValidateBy(onlyWithHls('codecs'))
  @ValidateBy(validCodecs)
  codecs?: HdrCodec[];
}

export class AudioOutputDto {
  @ApiPropertyOptional({
    default: OUTPUT_DEFAULTS.audio.target_lufs,
    minimum: -40,
    maximum: -5,
    description: 'Target integrated loudness of the speech (LUFS).',
  })
  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(-40)
  @Max(-5)
  target_lufs?: number;

  @ApiPropertyOptional({ enum: AUDIO_CONTAINERS, default: OUTPUT_DEFAULTS.audio.container })
  @IsOptional()
  @IsIn(AUDIO_CONTAINERS)
  container?: AudioOutput['container'];
}

export class SubmitJobBase {
  @ApiProperty({
    type: [JobInputDto],
    minItems: 1,
    maxItems: 20,
    // One source per input: an example holding every property of JobInputDto would be refused.
    example: [{ source_url: 'https://media.example.com/clip.mp4' }],
  })
  @IsDefined()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(20)
  @ValidateNested({ each: true })
  @Type(() => JobInputDto)
  inputs: JobInputDto[];

  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' }, example: { customer_ref: 'A-17' } })
  @IsOptional()
  @IsObject()
  // The body's own object: class-transformer would rebuild it and skip keys named like Object's
  // methods (constructor, toString, valueOf, hasOwnProperty), dropping the caller's data silently.
  @Transform(({ obj }: { obj: { metadata?: unknown } }) => obj.metadata, { toClassOnly: true })
  metadata?: Record<string, string>;

  // No example: a region name is the deployment's own, and an example sent as is would name a wrong one.
  @ApiPropertyOptional({ description: "Region whose workers run the job (default: the API's own)." })
  @IsOptional()
  @IsString()
  @Matches(/^[a-z0-9-]{1,32}$/, { message: 'region must be a region name' })
  region?: string;
}

export class SubmitSdr2HdrJobDto extends SubmitJobBase {
  @ApiPropertyOptional({ type: Sdr2HdrOutputDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => Sdr2HdrOutputDto)
  output?: Sdr2HdrOutputDto;
}

export class SubmitAudioJobDto extends SubmitJobBase {
  @ApiPropertyOptional({ type: AudioOutputDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => AudioOutputDto)
  output?: AudioOutputDto;
}

export class ListJobsQuery extends ListQuery {
  @ApiPropertyOptional({ enum: JOB_STATUSES, description: 'Only jobs in this status.' })
  @IsOptional()
  @IsIn(JOB_STATUSES)
  status?: JobStatus;
}
