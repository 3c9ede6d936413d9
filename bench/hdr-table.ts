// Issue 40's table, reproducible: `npm run hdr-table` runs each mapping (reference / expand × PQ 1000 / 4000
// and HLG) through the worker's own pipeline (convertSdrToHdr: the same argv, LUT, light measurement and
// metadata as a job) on the test fixtures, reads every output with the test decoder (test/support/hdr-decode.ts,
// not ffmpeg's or zimg's colour code), prints the Markdown table docs/media.md shows and draws
// docs/hdr-side-by-side.png (the chart and a photo-like frame: the source, and each output tone-mapped back
// for an SDR screen with one fixed curve).
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { DEFAULT_HDR_ENCODE } from '../src/media/encoder-settings';
import type { Mapping, Transfer } from '../src/media/hdr-mapping';
import { convertSdrToHdr } from '../src/media/pipelines';
import { probeMedia } from '../src/media/probe';
import { QUALITY_PRESETS } from '../src/media/quality-presets';
import { highlightGradientMp4, photoSceneMp4 } from '../test/fixtures/hdr-scenes';
import { colourChartMp4, sdrMp4 } from '../test/fixtures/media';
import { launchChromium } from '../test/support/chromium';
import { BARS, COLORCHECKER, readChart, SKIN, SUPER_WHITES, type ChartReading } from '../test/support/hdr-chart';
import { decodeLight, lightLevels, readCodedFrames, type LightFrame } from '../test/support/hdr-decode';
import { readGradient, type GradientReading } from '../test/support/hdr-gradient';
import { ROOT } from './lib/environment';

const exec = promisify(execFile);

interface Variant {
  label: string;
  mapping: Mapping;
  transfer: Transfer;
  peakNits: number;
}

const VARIANTS: Variant[] = [
  { label: 'reference PQ 1000', mapping: 'reference', transfer: 'pq', peakNits: 1000 },
  { label: 'reference PQ 4000', mapping: 'reference', transfer: 'pq', peakNits: 4000 },
  { label: 'reference HLG', mapping: 'reference', transfer: 'hlg', peakNits: 1000 },
  { label: 'expand PQ 1000', mapping: 'expand', transfer: 'pq', peakNits: 1000 },
  { label: 'expand PQ 4000', mapping: 'expand', transfer: 'pq', peakNits: 4000 },
  { label: 'expand HLG', mapping: 'expand', transfer: 'hlg', peakNits: 1000 },
];

/** One output of `source` through the worker's pipeline at the default quality. */
async function made(dir: string, source: string, variant: Variant, name: string) {
  const outcome = await probeMedia(source, { api: 'sdr2hdr' });
  if (!outcome.ok) throw new Error(`${source}: ${outcome.code}`);
  const output = join(dir, `${name}-${variant.label.replace(/ /g, '-')}.mp4`);
  const result = await convertSdrToHdr({
    ...DEFAULT_HDR_ENCODE,
    ...QUALITY_PRESETS.balanced,
    input: source,
    output,
    probe: outcome.probe,
    container: 'mp4',
    mapping: variant.mapping,
    transfer: variant.transfer,
    peakNits: variant.peakNits,
  });
  if (!result.ok) throw new Error(`${variant.label} ${name}: ${result.code}`);
  return result;
}

interface Row {
  variant: Variant;
  chart: ChartReading;
  gradient: GradientReading;
  /** testsrc2 320×180 and the photo: stated MaxCLL (null for HLG) and the decoded brightest pixel. */
  maxCll: { testsrc: [number | null, number]; photo: [number | null, number] };
  durationError: number;
  chartLight: LightFrame;
  photoLight: LightFrame;
}

async function measure(dir: string, variant: Variant): Promise<Row> {
  const [chartSource, gradientSource, photoSource, testsrc, threeSeconds] = await Promise.all([
    colourChartMp4(),
    highlightGradientMp4(),
    photoSceneMp4(),
    sdrMp4({ width: 320, height: 180, seconds: 1 }),
    sdrMp4({ width: 160, height: 90, seconds: 3, audio: false }),
  ]);
  const chartOut = await made(dir, chartSource, variant, 'chart');
  const gradientOut = await made(dir, gradientSource, variant, 'gradient');
  const photoOut = await made(dir, photoSource, variant, 'photo');
  const testsrcOut = await made(dir, testsrc, variant, 'testsrc');
  const durationOut = await made(dir, threeSeconds, variant, 'duration');
  const decodedMax = async (file: string) =>
    lightLevels((await readCodedFrames(file)).map((frame) => decodeLight(frame, variant.transfer))).maxCll;
  const lastLight = async (file: string) => {
    const frames = await readCodedFrames(file);
    return decodeLight(frames[frames.length - 1], variant.transfer);
  };
  return {
    variant,
    chart: await readChart(chartOut.outputPath, variant.transfer),
    gradient: await readGradient(gradientOut.outputPath),
    maxCll: {
      testsrc: [testsrcOut.light.maxCll, await decodedMax(testsrcOut.outputPath)],
      photo: [photoOut.light.maxCll, await decodedMax(photoOut.outputPath)],
    },
    durationError: durationOut.processedSeconds - 3,
    chartLight: await lastLight(chartOut.outputPath),
    photoLight: await lastLight(photoOut.outputPath),
  };
}

const fixed = (value: number, digits = 1) => value.toFixed(digits);

function table(rows: Row[]): string {
  const reference = rows.find((row) => row.variant.label === 'reference PQ 1000')!.chart;
  const lines = [
    '| output | bars / ColorChecker Δu′v′ max | max_cll testsrc2 / photo (decoded max) vs mastering | super-whites 235 / 245 / 254 cd/m² (steps) | ramp step (chart) | gradient: largest jump / code step / noise | skin ratio dark / light / pale | duration error |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const row of rows) {
    const { chart, gradient, variant } = row;
    const duv = (names: string[]) => Math.max(...names.map((name) => chart.patches.get(name)!.duv)).toFixed(4);
    const cll = ([stated, decoded]: [number | null, number]) => `${stated ?? '—'} (${Math.round(decoded)})`;
    const mastering = variant.transfer === 'pq' ? `${variant.peakNits}` : 'HLG (1000 display)';
    const whites = SUPER_WHITES.map((name) => chart.patches.get(name)!.nits);
    const steps = whites.slice(1).map((value, i) => `+${fixed((value / whites[i] - 1) * 100)} %`);
    const skin = SKIN.map((name) => fixed(chart.patches.get(name)!.nits / reference.patches.get(name)!.nits, 2));
    lines.push(
      `| ${variant.label} | ${duv(BARS)} / ${duv(COLORCHECKER)} | ${cll(row.maxCll.testsrc)} / ${cll(row.maxCll.photo)} vs ${mastering} | ` +
        `${whites.map((value) => Math.round(value)).join(' / ')} (${steps.join(', ')}) | ${fixed(chart.rampMaxStep)} | ` +
        `${fixed(gradient.columnMaxJump)} / ${fixed(gradient.codeMaxStep)} / ${fixed(gradient.noiseRms, 2)} | ` +
        `${skin.join(' / ')} | ${fixed(row.durationError * 1000, 0)} ms |`,
    );
  }
  return lines.join('\n');
}

// --- the side-by-side picture ---------------------------------------------------------------------------

/**
 * HDR light (cd/m², BT.2020) → sRGB bytes for an SDR screen, one curve for every output so they compare: BT.2020
 * to BT.709, then on luminance an extended Reinhard: 203 cd/m² (HDR reference white) at half the screen white's
 * light, 4000 cd/m² at its white; channels scaled alike.
 */
function viewable(frame: LightFrame): Buffer {
  const out = Buffer.alloc(frame.width * frame.height * 3);
  const white = 4000 / 203;
  const encode = (v: number) => {
    const c = Math.min(Math.max(v, 0), 1);
    return Math.round(255 * (c <= 0.0031308 ? 12.92 * c : 1.055 * c ** (1 / 2.4) - 0.055));
  };
  for (let i = 0; i < frame.r.length; i++) {
    const [r, g, b] = [frame.r[i], frame.g[i], frame.b[i]];
    const rgb709 = [
      1.6605 * r - 0.5876 * g - 0.0728 * b,
      -0.1246 * r + 1.1329 * g - 0.0083 * b,
      -0.0182 * r - 0.1006 * g + 1.1187 * b,
    ].map((v) => Math.max(v, 0) / 203);
    const y = 0.2126 * rgb709[0] + 0.7152 * rgb709[1] + 0.0722 * rgb709[2];
    const mapped = y > 0 ? (y * (1 + y / (white * white))) / (1 + y) : 0;
    const gain = y > 0 ? mapped / y : 0;
    for (let c = 0; c < 3; c++) out[i * 3 + c] = encode(rgb709[c] * gain);
  }
  return out;
}

async function png(dir: string, name: string, rgb: Buffer, width: number, height: number): Promise<string> {
  const raw = join(dir, `${name}.rgb`);
  const path = join(dir, `${name}.png`);
  await (await import('node:fs/promises')).writeFile(raw, rgb);
  await exec('ffmpeg', [
    '-v',
    'error',
    '-y',
    '-f',
    'rawvideo',
    '-pix_fmt',
    'rgb24',
    '-s',
    `${width}x${height}`,
    '-i',
    raw,
    path,
  ]);
  return `data:image/png;base64,${(await readFile(path)).toString('base64')}`;
}

async function sourcePng(dir: string, name: string, source: string): Promise<string> {
  const path = join(dir, `${name}-source.png`);
  await exec('ffmpeg', [
    '-v',
    'error',
    '-y',
    '-i',
    source,
    '-frames:v',
    '1',
    '-vf',
    'scale=out_range=pc,format=rgb24',
    path,
  ]);
  return `data:image/png;base64,${(await readFile(path)).toString('base64')}`;
}

async function drawSideBySide(dir: string, rows: Row[]): Promise<void> {
  const shown = ['reference PQ 1000', 'expand PQ 1000', 'expand PQ 4000', 'reference HLG', 'expand HLG'].map((label) =>
    rows.find((row) => row.variant.label === label)!,
  );
  const scenes: [string, string, (row: Row) => LightFrame][] = [
    ['chart', await colourChartMp4(), (row) => row.chartLight],
    ['photo', await photoSceneMp4(), (row) => row.photoLight],
  ];
  const cells: string[] = [];
  for (const [name, source, light] of scenes) {
    cells.push(`<figure><img src="${await sourcePng(dir, name, source)}"><figcaption>SDR source</figcaption></figure>`);
    for (const row of shown) {
      const frame = light(row);
      const image = await png(dir, `${name}-${row.variant.label}`, viewable(frame), frame.width, frame.height);
      cells.push(`<figure><img src="${image}"><figcaption>${row.variant.label}</figcaption></figure>`);
    }
  }
  const width = 3 * 330 + 20;
  const html = `<html><body style="margin:0;background:#fff;font:13px sans-serif">
<div style="display:grid;grid-template-columns:repeat(3,320px);gap:10px;padding:10px">
${cells.join('\n')}</div>
<p style="margin:0 10px 10px;width:${width - 20}px">Each HDR output decoded with the test decoder (10-bit samples, BT.2100 PQ EOTF / HLG luminance OOTF on the 1000 cd/m² display) and tone-mapped back for an SDR screen with one fixed curve for all (extended Reinhard on luminance, 203 cd/m² → half the screen white's light, 1000 cd/m² → 84 %, 4000 cd/m² → white): what is brighter here is brighter on an HDR display.</p>
<style>figure{margin:0}img{width:320px;height:180px;display:block}figcaption{padding:2px 0}</style></body></html>`;
  const profile = await mkdtemp(join(tmpdir(), 'mediajobs-hdr-table-chromium-'));
  const browser = await launchChromium(profile);
  try {
    const page = await browser.newPage();
    await page.setViewportSize({ width, height: 900 });
    await page.setContent(html);
    await page.screenshot({ path: join(ROOT, 'docs', 'hdr-side-by-side.png'), fullPage: true });
  } finally {
    await browser.close();
    await rm(profile, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'mediajobs-hdr-table-'));
  try {
    const rows: Row[] = [];
    for (const variant of VARIANTS) {
      rows.push(await measure(dir, variant));
      process.stderr.write(`hdr-table: ${variant.label} measured\n`);
    }
    process.stdout.write(`${table(rows)}\n`);
    await drawSideBySide(dir, rows);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

void main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
