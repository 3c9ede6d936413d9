// The CLI prices a local file before uploading it from its headers alone (sdk/src/media-info.ts):
// duration and picture size must agree with ffprobe on every container the service accepts.
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { promisify } from 'node:util';
import { randomBytesFile, sdrMovPcm, sdrMp4, speechM4a, speechWav } from '../fixtures/media';
import { buildSdk, loadSdk, type Sdk } from './support';

async function ffprobe(file: string): Promise<{ duration: number; width?: number; height?: number }> {
  const { stdout } = await promisify(execFile)('ffprobe', [
    '-v',
    'error',
    '-show_entries',
    'format=duration:stream=codec_type,width,height',
    '-of',
    'json',
    file,
  ]);
  const parsed = JSON.parse(stdout) as {
    format: { duration: string };
    streams: { codec_type: string; width?: number; height?: number }[];
  };
  const video = parsed.streams.find((stream) => stream.codec_type === 'video');
  return { duration: Number(parsed.format.duration), width: video?.width, height: video?.height };
}

describe('describeMedia (a local file’s duration and picture size from its headers)', () => {
  let sdkDir: string;
  let sdk: Sdk;
  beforeAll(() => {
    sdkDir = buildSdk();
    sdk = loadSdk(sdkDir);
  });
  afterAll(() => rmSync(sdkDir, { recursive: true, force: true }));

  it.each([
    ['MP4 (h264 + aac)', () => sdrMp4({ width: 640, height: 360, seconds: 3 })],
    ['MOV (pcm audio)', () => sdrMovPcm()],
    ['WAV', () => speechWav()],
    ['M4A', () => speechM4a()],
  ])('%s agrees with ffprobe', async (_name, make) => {
    const file = await make();
    const [described, probed] = await Promise.all([sdk.describeMedia(file), ffprobe(file)]);
    expect(described).not.toBeNull();
    expect(described!.duration_seconds).toBeCloseTo(probed.duration, 1);
    expect(described!.width).toBe(probed.width);
    expect(described!.height).toBe(probed.height);
  });

  it('a file that is not media is not described (the CLI then uploads it and lets the service judge)', async () => {
    expect(await sdk.describeMedia(await randomBytesFile())).toBeNull();
  });
});
