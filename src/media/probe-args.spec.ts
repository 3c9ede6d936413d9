// The input probe's ffprobe argv: what it asks for, and how it opens a local file or a URL.
import { buildProbeArgs } from './probe-args';

describe('buildProbeArgs', () => {
  it('asks for format, streams and the first packets (CENC side data), on local files only', () => {
    expect(buildProbeArgs('/data/upload.bin')).toEqual([
      '-v',
      'error',
      '-protocol_whitelist',
      'file',
      '-format_whitelist',
      'mov,wav',
      '-print_format',
      'json',
      '-show_format',
      '-show_streams',
      '-show_packets',
      '-read_intervals',
      '%+#16',
      '-show_entries',
      'packet=stream_index:packet_side_data=side_data_type',
      '/data/upload.bin',
    ]);
  });

  it('adds a network read timeout for URLs', () => {
    expect(buildProbeArgs('https://example.test/a.mp4', 3_000_000).slice(2, 8)).toEqual([
      '-protocol_whitelist',
      'http,https,tcp,tls',
      '-rw_timeout',
      '3000000',
      '-format_whitelist',
      'mov,wav',
    ]);
  });
});
