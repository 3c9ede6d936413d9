// Where the light goes (issue: HDR that looks like HDR), with real ffmpeg on the HDR test card: `expand`
// reaches the requested peak and keeps 18 % grey where its formula puts it, `reference` stays at BT.2408's
// placement, HLG is HLG to ffprobe and mediainfo, and the light levels written into the file are the
// decoded picture's own.
import { DEFAULT_HDR_ENCODE } from '../../src/media/encoder-settings';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { neutralLight, SDR_GREY_18_SIGNAL, type Mapping, type Transfer } from '../../src/media/hdr-mapping';
import { readHdrMetadata } from '../../src/media/hdr-metadata';
import { readMediainfoHdr } from '../../src/media/mediainfo';
import { bandOf, LEGEND_HEIGHT, renderLightMap } from '../../src/media/light-map';
import type { ProbeResult } from '../../src/media/media.types';
import { convertSdrToHdr, type SdrToHdrSuccess } from '../../src/media/pipelines';
import { probeMedia } from '../../src/media/probe';
import { LIGHT_PATTERN, lightPatternMp4 } from '../fixtures/media';
import { decodedLightLevels, patchLuminance } from '../support/hdr-light';

const exec = promisify(execFile);
let out: string;

beforeAll(() => {
  out = mkdtempSync(join(tmpdir(), 'mediajobs-hdr-light-'));
});
afterAll(() => rmSync(out, { recursive: true, force: true }));

async function probed(path: string): Promise<ProbeResult> {
  const outcome = await probeMedia(path, { api: 'sdr2hdr' });
  if (!outcome.ok) throw new Error(`fixture refused: ${outcome.code}`);
  return outcome.probe;
}

async function convert(
  name: string,
  options: { mapping: Mapping; transfer?: Transfer; peakNits?: number; dim?: boolean },
): Promise<SdrToHdrSuccess> {
  const input = await lightPatternMp4({ dim: options.dim });
  const output = join(out, `${name}.mp4`);
  const result = await convertSdrToHdr({
    ...DEFAULT_HDR_ENCODE,
    input,
    output,
    probe: await probed(input),
    container: 'mp4',
    ...options,
  });
  if (!result.ok) throw new Error(`${name}: ${result.code} ${result.stderrTail.join('\n')}`);
  return result;
}

const grey18Code = Math.round(16 + 219 * SDR_GREY_18_SIGNAL);

describe('sdr2hdr light (real ffmpeg, HDR test card)', () => {
  it.each([1000, 4000])(
    'expand at %i cd/m² puts the highlight at ≥ 80 %% of the peak and 18 %% grey on its curve',
    async (peakNits) => {
      const result = await convert(`expand-${peakNits}`, { mapping: 'expand', peakNits });
      const highlight = await patchLuminance(result.outputPath, LIGHT_PATTERN.highlight, 'pq');
      const white = await patchLuminance(result.outputPath, LIGHT_PATTERN.white, 'pq');
      const grey = await patchLuminance(result.outputPath, LIGHT_PATTERN.grey18, 'pq');
      const choice = { mapping: 'expand', transfer: 'pq', peakNits } as const;
      expect(grey18Code).toBe(LIGHT_PATTERN.grey18.code);
      expect(highlight).toBeGreaterThanOrEqual(0.8 * peakNits);
      expect(white).toBeGreaterThanOrEqual(0.8 * peakNits);
      expect(Math.abs(grey / neutralLight(choice, (grey18Code - 16) / 219) - 1)).toBeLessThan(0.05);
    },
    120_000,
  );

  it('reference keeps BT.2408: white at ≈ 203 cd/m², nothing above 260', async () => {
    const result = await convert('reference', { mapping: 'reference' });
    const white = await patchLuminance(result.outputPath, LIGHT_PATTERN.white, 'pq');
    const highlight = await patchLuminance(result.outputPath, LIGHT_PATTERN.highlight, 'pq');
    expect(Math.abs(white / 203 - 1)).toBeLessThan(0.05);
    expect(highlight).toBeLessThanOrEqual(260);
    const decoded = await decodedLightLevels(result.outputPath, result.width, result.height);
    expect(decoded.maxCll).toBeLessThanOrEqual(260);
  }, 120_000);

  it.each([
    ['reference', false],
    ['expand', false],
    ['reference', true],
    ['expand', true],
  ] as const)(
    '%s (dim: %s) writes MaxCLL/MaxFALL within 5 %% of the decoded picture, in the SEI and the clli box',
    async (mapping, dim) => {
      const result = await convert(`levels-${mapping}-${dim ? 'dim' : 'bright'}`, { mapping, peakNits: 1000, dim });
      const decoded = await decodedLightLevels(result.outputPath, result.width, result.height);
      const boxes = await readHdrMetadata(result.outputPath);
      const info = await readMediainfoHdr(result.outputPath);
      expect(boxes).toEqual({ levels: { maxCll: result.light.maxCll, maxFall: result.light.maxFall }, peakNits: 1000 });
      expect(info?.maxCll).toBe(`${result.light.maxCll} cd/m2`);
      expect(info?.maxFall).toBe(`${result.light.maxFall} cd/m2`);
      expect(Math.abs(result.light.maxCll! / decoded.maxCll - 1)).toBeLessThan(0.05);
      expect(Math.abs(result.light.maxFall! / decoded.maxFall - 1)).toBeLessThan(0.05);
      if (dim && mapping === 'reference') expect(Math.abs(decoded.maxCll / 60 - 1)).toBeLessThan(0.05);
    },
    120_000,
  );

  it.each(['reference', 'expand'] as const)(
    '%s with hlg writes BT.2100 HLG that ffprobe and mediainfo call HLG',
    async (mapping) => {
      const result = await convert(`hlg-${mapping}`, { mapping, transfer: 'hlg' });
      const { stdout } = await exec('ffprobe', [
        '-v',
        'error',
        '-select_streams',
        'v:0',
        '-show_entries',
        'stream=codec_name,profile,pix_fmt,color_transfer,color_primaries,color_space',
        '-of',
        'json',
        result.outputPath,
      ]);
      expect(JSON.parse(stdout).streams[0]).toEqual({
        codec_name: 'hevc',
        profile: 'Main 10',
        pix_fmt: 'yuv420p10le',
        color_transfer: 'arib-std-b67',
        color_primaries: 'bt2020',
        color_space: 'bt2020nc',
      });
      expect(await readMediainfoHdr(result.outputPath)).toMatchObject({ transfer: 'HLG', colourPrimaries: 'BT.2020' });
      expect(result.light).toEqual({ mapping, transfer: 'hlg', masteringPeakNits: null, maxCll: null, maxFall: null });
      const white = await patchLuminance(result.outputPath, LIGHT_PATTERN.white, 'hlg');
      // On the 1000 cd/m² HLG reference display: BT.2408's 75 % signal (203 cd/m²), or the display's peak.
      if (mapping === 'reference') expect(Math.abs(white / 203 - 1)).toBeLessThan(0.05);
      else expect(white).toBeGreaterThanOrEqual(800);
    },
    120_000,
  );

  it('draws a light map: the source frame beside the output in cd/m² bands, reference and expand visibly apart', async () => {
    const card = await lightPatternMp4();
    const pixelAt = async (png: string, x: number, y: number) => {
      const { stdout } = await exec(
        'ffmpeg',
        ['-v', 'error', '-i', png, '-vf', `crop=1:1:${x}:${y}`, '-f', 'rawvideo', '-pix_fmt', 'rgb24', '-'],
        {
          encoding: 'buffer',
        },
      );
      return [...stdout.subarray(0, 3)];
    };
    // The band's colour, give or take the rounding of 16-bit LUT output to 8-bit RGB.
    const band = (nits: number) => {
      const hex = bandOf(nits).colour;
      return [0, 2, 4].map((at) => expect.closeTo(parseInt(hex.slice(at, at + 2), 16), -0.5));
    };
    const white = LIGHT_PATTERN.white;
    const grey = LIGHT_PATTERN.grey18;
    const colours: Record<string, number[]> = {};
    for (const [name, options] of [
      ['reference', { mapping: 'reference' }],
      ['expand', { mapping: 'expand', peakNits: 1000 }],
    ] as const) {
      const result = await convert(`map-${name}`, options);
      const png = join(out, `map-${name}.png`);
      const run = await renderLightMap({
        source: card,
        output: result.outputPath,
        png,
        transfer: 'pq',
        width: result.width,
        height: result.height,
        durationSeconds: 1,
        sourceColour: (await probed(card)).video!,
      });
      expect(run.status).toBe('succeeded');
      const { stdout } = await exec('ffprobe', [
        '-v',
        'error',
        '-show_entries',
        'stream=width,height',
        '-of',
        'csv=p=0',
        png,
      ]);
      expect(stdout.trim()).toBe(`${2 * result.width},${result.height + LEGEND_HEIGHT}`);
      colours[name] = await pixelAt(png, result.width + white.x + white.w / 2, white.y + white.h / 2);
      // 18 % grey sits in the same band for both (BT.2408 placement below expand's knee).
      expect(await pixelAt(png, result.width + grey.x + grey.w / 2, grey.y + grey.h / 2)).toEqual(band(23.7));
    }
    expect(colours.reference).toEqual(band(203));
    expect(colours.expand).toEqual(band(1000));
  }, 120_000);
});
