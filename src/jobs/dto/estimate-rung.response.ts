// One rendition of a package as the estimate prices it (`items[i].rungs[]`, package `hls` only).
import { ApiProperty } from '@nestjs/swagger';

export class EstimateRungResponse {
  @ApiProperty({
    enum: ['hevc', 'av1', 'h264'],
    example: 'hevc',
    description: '`hevc` (HEVC Main10) and `av1` (AV1 10-bit) are HDR rungs; `h264` (H.264 High, BT.709) is SDR.',
  })
  codec: 'hevc' | 'av1' | 'h264';
  @ApiProperty({
    enum: ['PQ', 'HLG', 'SDR'],
    example: 'PQ',
    description: "The HLS VIDEO-RANGE: the job's transfer for HDR rungs, SDR for the rungs made from the source.",
  })
  video_range: 'PQ' | 'HLG' | 'SDR';
  @ApiProperty({ type: 'integer', example: 1920 }) width: number;
  @ApiProperty({ type: 'integer', example: 1080 }) height: number;
  @ApiProperty({
    type: 'integer',
    example: 5800,
    description: "The encoder's target (kbit/s); the playlist publishes what the segments measure.",
  })
  bitrate_kbps: number;
  @ApiProperty({
    type: 'integer',
    example: 26,
    description: "This rung's credits: what a file of its picture costs for the item's seconds.",
  })
  estimated_credits: number;
}
