// The inverse of a LUT-made mapping (`expand`, and `reference` with HLG; src/media/hdr-mapping.ts) as a .cube
// LUT: BT.2020 PQ or HLG R'G'B' back to the source's SDR R'G'B'. The round-trip check (output-measure.ts) runs
// an output through it and compares the result with the source; `reference` with PQ needs no LUT (zscale
// inverts its one step).
import {
  bt2020Luminance,
  expandCurve,
  expandPeak,
  hlgDecodeDisplayLight,
  invert,
  expandToSdr,
  REFERENCE_WHITE_NITS,
  pqDecode,
  SDR_PEAK_NITS,
  toBt2020Matrix,
  apply,
  type MappingChoice,
  type Rgb,
} from './hdr-mapping';

/** The inverse of sdrDecode: BT.1886 (γ 2.4), or sRGB; relative light 0..1 → signal 0..1. */
function sdrEncode(light: number, transfer: string | null): number {
  const v = Math.min(Math.max(light, 0), 1);
  if (transfer === 'iec61966-2-1') return v <= 0.0031308 ? v * 12.92 : 1.055 * v ** (1 / 2.4) - 0.055;
  if (transfer === 'linear') return v;
  return v ** (1 / 2.4);
}

export interface ExpandInverseInput {
  choice: MappingChoice;
  sourcePrimaries: string | null;
  sourceTransfer: string | null;
  size?: number;
}

/** Input: BT.2020 PQ/HLG R'G'B' (full range); output: the source's R'G'B' (full range); red fastest. */
export function buildExpandInverseCube(input: ExpandInverseInput): string {
  const size = input.size ?? 33;
  // `reference` (HLG only comes here: PQ's zscale step is inverted by zscale) is the straight BT.2408 line.
  const curve = input.choice.mapping === 'expand' ? expandCurve(expandPeak(input.choice)) : null;
  const toSdr = (nits: number) => (curve ? expandToSdr(curve, nits) : (nits * SDR_PEAK_NITS) / REFERENCE_WHITE_NITS);
  const fromBt2020 = invert(toBt2020Matrix(input.sourcePrimaries));
  const lines = [
    `TITLE "mediajobs ${input.choice.mapping} inverse: ${input.choice.transfer} to SDR"`,
    `LUT_3D_SIZE ${size}`,
  ];
  for (let b = 0; b < size; b++) {
    for (let g = 0; g < size; g++) {
      for (let r = 0; r < size; r++) {
        const signal: Rgb = [r / (size - 1), g / (size - 1), b / (size - 1)];
        const light = input.choice.transfer === 'pq' ? (signal.map(pqDecode) as Rgb) : hlgDecodeDisplayLight(signal);
        const luminance = bt2020Luminance(light);
        const gain = luminance > 0 ? toSdr(luminance) / luminance : SDR_PEAK_NITS / REFERENCE_WHITE_NITS;
        const sdr = apply(fromBt2020, light.map((channel) => (channel * gain) / SDR_PEAK_NITS) as Rgb);
        lines.push(sdr.map((value) => sdrEncode(value, input.sourceTransfer).toFixed(6)).join(' '));
      }
    }
  }
  return `${lines.join('\n')}\n`;
}
