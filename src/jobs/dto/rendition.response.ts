// One rendition of an HLS package as the job view and the webhook show it (docs/api-guide.md, "Streaming packages").
import { ApiProperty } from '@nestjs/swagger';

export class RenditionLightResponse {
  @ApiProperty({ enum: ['reference', 'expand'], example: 'reference' }) mapping: string;
  @ApiProperty({ type: Number, nullable: true, example: 1000 }) mastering_peak_nits: number | null;
  @ApiProperty({ type: Number, nullable: true, example: 249 }) max_cll: number | null;
  @ApiProperty({ type: Number, nullable: true, example: 180 }) max_fall: number | null;
}

export class RenditionResponse {
  @ApiProperty({ enum: ['hevc', 'av1', 'h264'], example: 'hevc' }) codec: string;
  @ApiProperty({ type: 'integer', example: 1920 }) width: number;
  @ApiProperty({ type: 'integer', example: 1080 }) height: number;
  @ApiProperty({ example: 'smpte2084', description: 'The transfer the rendition measured (bt709 for SDR).' })
  transfer: string;
  @ApiProperty({ enum: ['PQ', 'HLG', 'SDR'], example: 'PQ' }) video_range: string;
  @ApiProperty({
    type: 'integer',
    example: 6400000,
    description: 'Peak segment bit rate (bit/s, audio included), measured from the segments: the playlist’s BANDWIDTH.',
  })
  bandwidth: number;
  @ApiProperty({ type: 'integer', example: 5900000, description: 'Average bit rate (bit/s, audio included).' })
  average_bandwidth: number;
  @ApiProperty({ type: Number, example: 29.97 }) frame_rate: number;
  @ApiProperty({ type: 'integer', example: 15 }) segments: number;
  @ApiProperty({ type: Number, example: 60.06 }) duration_seconds: number;
  @ApiProperty({
    type: RenditionLightResponse,
    nullable: true,
    description: 'HDR renditions: the mapping, ST 2086 peak and measured light levels (null for SDR).',
  })
  light: RenditionLightResponse | null;
}
