// What an output measured from the file itself, and its checks (docs/api-decisions.md §12): the
// OpenAPI side of src/media/output-measure.ts and src/media/output-checks.ts. Every measured field
// is optional: jobs that ended before outputs were measured do not have them.
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

export class MasteringDisplayResponse {
  @ApiProperty({ type: Number, example: 0.0001, description: 'ST 2086 minimum luminance (cd/m²).' }) min_nits: number;
  @ApiProperty({ type: Number, example: 1000, description: 'ST 2086 maximum luminance (cd/m²).' }) max_nits: number;
}

export class ContentLightResponse {
  @ApiProperty({ type: 'integer', example: 987, description: 'MaxCLL as the decoder reads it (cd/m²).' })
  max_cll: number;
  @ApiProperty({ type: 'integer', example: 212, description: 'MaxFALL as the decoder reads it (cd/m²).' })
  max_fall: number;
}

export class AudioStreamResponse {
  @ApiProperty({ example: 'aac' }) codec: string;
  @ApiProperty({ type: 'integer', example: 2 }) channels: number;
  @ApiProperty({ type: 'integer', example: 48000 }) sample_rate: number;
}

const MEASURED = 'Measured from the output file.';

/** The measured part of `output.video` (ffprobe of the output; colour tags and side data as a decoder reads them). */
export class MeasuredVideoFields {
  @ApiPropertyOptional({ type: String, nullable: true, enum: ['mp4', 'mov', null], description: MEASURED })
  container?: string | null;
  @ApiPropertyOptional({ type: Number, nullable: true, example: 29.97, description: 'Frames per second. ' + MEASURED })
  frame_rate?: number | null;
  @ApiPropertyOptional({ type: 'integer', example: 300, description: 'Frames in the video stream. ' + MEASURED })
  frames?: number;
  @ApiPropertyOptional({ type: Number, example: 10.0, description: "The video stream's duration. " + MEASURED })
  duration_seconds?: number;
  @ApiPropertyOptional({ type: 'integer', example: 48213377, description: 'Bytes of the file. ' + MEASURED })
  bytes?: number;
  @ApiPropertyOptional({ type: 'integer', example: 10, description: 'Bits per sample. ' + MEASURED })
  bit_depth?: number;
  @ApiPropertyOptional({ type: String, nullable: true, example: 'yuv420p10le' }) pix_fmt?: string | null;
  @ApiPropertyOptional({ type: String, nullable: true, example: 'bt2020nc', description: 'Colour matrix tag.' })
  matrix?: string | null;
  @ApiPropertyOptional({ type: String, nullable: true, example: 'tv', description: 'Colour range tag.' })
  range?: string | null;
  @ApiPropertyOptional({
    type: MasteringDisplayResponse,
    nullable: true,
    description: 'ST 2086 as the first frame carries it; null when absent (HLG).',
  })
  mastering_display?: MasteringDisplayResponse | null;
  @ApiPropertyOptional({
    type: ContentLightResponse,
    nullable: true,
    description: 'CTA-861.3 content light levels as the first frame carries them; null when absent (HLG).',
  })
  content_light?: ContentLightResponse | null;
  @ApiPropertyOptional({ type: [AudioStreamResponse], description: 'The audio streams kept in the output.' })
  audio_streams?: AudioStreamResponse[];
}

/** The measured part of `output.audio` (ffprobe and ebur128 of the output). */
export class MeasuredAudioFields {
  @ApiPropertyOptional({ type: String, nullable: true, enum: ['wav', 'm4a', null], description: MEASURED })
  container?: string | null;
  @ApiPropertyOptional({ example: 'pcm_s16le' }) codec?: string;
  @ApiPropertyOptional({ type: 'integer', example: 1 }) channels?: number;
  @ApiPropertyOptional({ type: 'integer', example: 48000 }) sample_rate?: number;
  @ApiPropertyOptional({ type: Number, example: 10.0, description: MEASURED }) duration_seconds?: number;
  @ApiPropertyOptional({ type: 'integer', example: 960044, description: 'Bytes of the file. ' + MEASURED })
  bytes?: number;
  @ApiPropertyOptional({
    type: Number,
    nullable: true,
    example: 4.2,
    description: 'EBU R128 loudness range (LU). ' + MEASURED,
  })
  loudness_range_lu?: number | null;
}

export class OutputCheckResponse {
  @ApiProperty({
    example: 'round_trip_ssim',
    description:
      'Stable snake_case name: hdr_signalling, frame_count, duration, round_trip_ssim (sdr2hdr); ' +
      'integrated_loudness, true_peak, duration (audio); readable (an output the tools could not read).',
  })
  name: string;
  @ApiProperty({ example: true }) passed: boolean;
  @ApiProperty({ example: '≥ 0.93 (balanced)', description: 'The condition the output had to meet, in words.' })
  expected: string;
  @ApiProperty({
    oneOf: [{ type: 'number' }, { type: 'string' }],
    nullable: true,
    example: 0.962,
    description: 'What the output file measured (a number where the check is numeric).',
  })
  measured: number | string | null;
}
