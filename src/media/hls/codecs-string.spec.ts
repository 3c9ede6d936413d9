import { av1Codecs, avcCodecs, hevcCodecs } from './codecs-string';
import { peakBitrate, averageBitrate, type MediaPlaylist } from './media-playlist';
import { buildMasterPlaylist } from './master-playlist';

describe('CODECS strings from the decoder configuration records', () => {
  test('HEVC Main10, main tier, level 4 (x265: progressive, frame-only)', () => {
    // configurationVersion, space/tier/profile, compatibility ×4, constraints ×6, level
    const hvcC = Buffer.from([1, 0x02, 0x20, 0, 0, 0, 0x90, 0, 0, 0, 0, 0, 120]);
    expect(hevcCodecs('hvc1', hvcC)).toBe('hvc1.2.4.L120.90');
  });

  test('HEVC Main, high tier, level 5.1 (Apple’s example)', () => {
    const hvcC = Buffer.from([1, 0x21, 0x60, 0, 0, 0, 0xb0, 0, 0, 0, 0, 0, 153]);
    expect(hevcCodecs('hvc1', hvcC)).toBe('hvc1.1.6.H153.B0');
  });

  test('H.264 High 4.0 and AV1 Main 10-bit level 4.0', () => {
    expect(avcCodecs('avc1', Buffer.from([1, 0x64, 0x00, 0x28]))).toBe('avc1.640028');
    // seq_profile 0, seq_level_idx 8; tier 0, high_bitdepth 1
    expect(av1Codecs(Buffer.from([0x81, 0x08, 0x40, 0]))).toBe('av01.0.08M.10');
  });
});

describe('bandwidths measured from the segments (RFC 8216 §4.3.4.2)', () => {
  const playlist = (sizes: number[], durations: number[], targetDuration = 4): MediaPlaylist => ({
    targetDuration,
    map: 'init.mp4',
    segments: sizes.map((bytes, i) => ({ uri: `seg-${i}.m4s`, bytes, duration: durations[i] })),
  });

  test('the peak is the densest run of segments lasting 0.5–1.5 target durations; a short last one counts only with its neighbour', () => {
    // The last segment alone (4 Mbit/s over 0.1 s) is too short to count; with its neighbour it is the peak.
    const list = playlist([400_000, 400_000, 50_000], [4, 4, 0.1]);
    expect(peakBitrate(list)).toBe(Math.round(((400_000 + 50_000) * 8) / 4.1));
    expect(averageBitrate(list)).toBe(Math.round((850_000 * 8) / 8.1));
  });

  test('a stream shorter than half the target duration: its own rate', () => {
    expect(peakBitrate(playlist([1000], [1]))).toBe(8000);
  });
});

test('the master playlist names every variant with its range, codecs and the audio group', () => {
  const text = buildMasterPlaylist(
    [
      {
        folder: 'hevc-1080-pq',
        bandwidth: 6_000_000,
        averageBandwidth: 5_000_000,
        codecs: 'hvc1.2.4.L123.90',
        width: 1920,
        height: 1080,
        frameRate: 29.97,
        videoRange: 'PQ',
      },
    ],
    { codecs: 'mp4a.40.2', channels: 2 },
  );
  expect(text).toBe(
    [
      '#EXTM3U',
      '#EXT-X-VERSION:7',
      '#EXT-X-INDEPENDENT-SEGMENTS',
      '#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aac",NAME="Audio",DEFAULT=YES,AUTOSELECT=YES,CHANNELS="2",URI="audio/playlist.m3u8"',
      '#EXT-X-STREAM-INF:BANDWIDTH=6000000,AVERAGE-BANDWIDTH=5000000,CODECS="hvc1.2.4.L123.90,mp4a.40.2",RESOLUTION=1920x1080,FRAME-RATE=29.970,VIDEO-RANGE=PQ,AUDIO="aac"',
      'hevc-1080-pq/playlist.m3u8',
      '',
    ].join('\n'),
  );
});
