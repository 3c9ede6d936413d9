// The parts of an item's output that only an HLS package has (docs/api-guide.md, "Streaming packages"), for the OpenAPI document.
import { ApiProperty } from '@nestjs/swagger';
import { OutputLightResponse } from './job.response';

export class RenditionResponse {
  @ApiProperty({ enum: ['hevc', 'av1', 'h264'], example: 'hevc' }) codec: string;
  @ApiProperty({ type: 'integer', example: 1920 }) width: number;
  @ApiProperty({ type: 'integer', example: 1080 }) height: number;
  @ApiProperty({ enum: ['smpte2084', 'arib-std-b67', 'bt709'], example: 'smpte2084' }) transfer: string;
  @ApiProperty({ enum: ['PQ', 'HLG', 'SDR'], example: 'PQ', description: 'The master playlist\u2019s VIDEO-RANGE.' })
  video_range: string;
  @ApiProperty({ type: 'integer', example: 6_200_000, description: 'Peak bits/s over segments (BANDWIDTH).' })
  bandwidth: number;
  @ApiProperty({ type: 'integer', example: 4_800_000, description: 'Mean bits/s (AVERAGE-BANDWIDTH).' })
  average_bandwidth: number;
  @ApiProperty({ type: Number, example: 23.976 }) frame_rate: number;
  @ApiProperty({ type: 'integer', example: 15, description: 'Media segments in its playlist.' }) segments: number;
  @ApiProperty({ type: Number, example: 59.96 }) duration_seconds: number;
  @ApiProperty({
    // A thunk: job.response.ts imports this file, so OutputLightResponse is not defined yet when it loads.
    type: () => OutputLightResponse,
    nullable: true,
    description: 'HDR renditions: where the light went and how bright the picture is, measured; null for SDR.',
  })
  light: OutputLightResponse | null;
}
