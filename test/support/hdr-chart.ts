// What an HDR output made from the colour chart (test/fixtures/media.ts COLOUR_CHART) shows, measured with
// the test decoder (hdr-decode.ts): each patch's light and chromaticity against the source's, the
// super-whites, and the 10-bit steps of the luma ramp. The HDR tests and the numbers in docs/media.md use it.
import { COLOUR_CHART, type ChartPatch } from '../fixtures/media';
import {
  boxLight,
  decodeLight,
  deltaEItp,
  luminance,
  readCodedFrames,
  sdrColourLight,
  uvDistance,
  uvPrime,
  type HdrTransfer,
  type Rgb,
} from './hdr-decode';

export interface PatchReading {
  name: string;
  /** Decoded light, cd/m² per BT.2020 channel (the patch's mean). */
  light: Rgb;
  /** Decoded luminance, cd/m². */
  nits: number;
  /** Where BT.2408 puts the source colour (SDR white at 203 cd/m²), cd/m². */
  referenceNits: number;
  /** Chromaticity distance from the source colour. */
  duv: number;
  /** ΔE_ITP against the BT.2408 placement of the source colour (meaningful where the mapping keeps it). */
  deltaE: number;
}

export interface ChartReading {
  patches: Map<string, PatchReading>;
  /** The largest step, in 10-bit luma codes, between adjacent 8-bit source codes along the ramp. */
  rampMaxStep: number;
}

/** The last frame of an output of the chart, decoded as `transfer` (HLG on its 1000 cd/m² reference display). */
export async function readChart(file: string, transfer: HdrTransfer): Promise<ChartReading> {
  const frames = await readCodedFrames(file);
  const coded = frames[frames.length - 1];
  if (coded.width !== COLOUR_CHART.width || coded.height !== COLOUR_CHART.height)
    throw new Error(`${file}: ${coded.width}×${coded.height} is not the chart's size`);
  const light = decodeLight(coded, transfer);
  const patches = new Map<string, PatchReading>();
  for (const patch of COLOUR_CHART.patches) patches.set(patch.name, reading(patch, boxLight(light, patch.box)));
  return { patches, rampMaxStep: rampMaxStep(coded.y, coded.width) };
}

function reading(patch: ChartPatch, shown: Rgb): PatchReading {
  const expected = sdrColourLight(patch.rgb);
  const neutral = patch.rgb[0] === patch.rgb[1] && patch.rgb[1] === patch.rgb[2];
  return {
    name: patch.name,
    light: shown,
    nits: luminance(shown),
    referenceNits: luminance(expected),
    duv: neutral && patch.rgb[0] === 0 ? 0 : uvDistance(uvPrime(shown), uvPrime(expected)),
    deltaE: deltaEItp(shown, expected),
  };
}

/** Per 8-bit code of the ramp, the mean 10-bit luma of its inner columns; the largest difference of neighbours. */
function rampMaxStep(y: Uint16Array, width: number): number {
  const { ramp } = COLOUR_CHART;
  const codes = ramp.to - ramp.from + 1;
  const means: number[] = [];
  for (let code = 0; code < codes; code++) {
    const first = Math.ceil((code * width) / codes) + 1;
    const last = Math.ceil(((code + 1) * width) / codes) - 2;
    let sum = 0;
    let count = 0;
    for (let row = ramp.y + 8; row < ramp.y + ramp.h - 8; row++) {
      for (let x = first; x <= last; x++) {
        sum += y[row * width + x];
        count++;
      }
    }
    means.push(sum / count);
  }
  return Math.max(...means.slice(1).map((mean, i) => mean - means[i]));
}

export const BARS = ['red 75%', 'green 75%', 'blue 75%', 'cyan 75%', 'magenta 75%', 'yellow 75%'];
export const SKIN = ['dark skin', 'light skin', 'pale skin'];
export const COLORCHECKER = [
  'dark skin',
  'light skin',
  'blue sky',
  'foliage',
  'orange',
  'purplish blue',
  'moderate red',
];
export const SUPER_WHITES = ['code 235', 'code 245', 'code 254'];
