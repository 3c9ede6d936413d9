// The customer's speed/quality choice for sdr2hdr (`output.quality`, docs/api-decisions.md §11), mapped to x265
// settings. One owner: the submit validates against QUALITY_CHOICES, the worker encodes with
// QUALITY_PRESETS[quality], and README/OpenAPI publish the measured table below.
//
// Round-trip fidelity (PQ output → BT.709 with zscale npl=203 → luma SSIM against the colour step alone,
// i.e. the encoder's own loss; method in test/media/sdr2hdr-quality.spec.ts), 640×360 2 s testsrc2,
// and the encode's wall time on the same clip, measured here (2 cores, load from other work):
//   ultrafast CRF 12 → 0.918, 1.06 s | superfast 12 → 0.944, 1.19 s | veryfast 12 → 0.962, 1.99 s
//   medium 12 → 0.968, 2.37 s | medium 10 → 0.973, 2.55 s | slow 12 → 0.973, 4.75 s
// `npm run bench -- --only=presets` measures each preset at 1080p (speed × realtime, bytes, SSIM);
// README "Speed or quality" carries its latest table.
import { DEFAULT_X265_CRF, DEFAULT_X265_PRESET, type X265Preset } from './encoder-settings';

export const QUALITY_CHOICES = ['fast', 'balanced', 'best'] as const;
export type Quality = (typeof QUALITY_CHOICES)[number];
export const DEFAULT_QUALITY: Quality = 'balanced';

export interface EncoderSetting {
  preset: X265Preset;
  crf: number;
}

export const QUALITY_PRESETS: Record<Quality, EncoderSetting> = {
  // The fastest x265 setting: gives up fidelity (round-trip SSIM ≈ 0.92 on the hard synthetic clip,
  // below the 0.95 the other two keep) for the shortest wait. CRF 12 as balanced, so the loss is the
  // preset's, not a lower bit budget.
  fast: { preset: 'ultrafast', crf: 12 },
  // Today's default, unchanged (see DEFAULT_X265_PRESET): the fastest setting that keeps ≥ 0.95.
  balanced: { preset: DEFAULT_X265_PRESET, crf: DEFAULT_X265_CRF },
  // medium at CRF 10: the best fidelity per second of encode found (slow 12 is no better and ~2× slower).
  best: { preset: 'medium', crf: 10 },
};

/** The OpenAPI description of `output.quality`: what each choice trades (README has the measured table). */
export const QUALITY_DESCRIPTION =
  'Speed or fidelity of the HDR10 encode. `balanced` (default): x265 veryfast CRF 12, round-trip luma SSIM ≥ 0.95. ' +
  '`best`: x265 medium CRF 10, the highest fidelity (round-trip SSIM 0.97 at 1080p), about 1.5× the encode time of balanced. ' +
  '`fast`: x265 ultrafast CRF 12, half the encode time of balanced, and gives up fidelity ' +
  '(round-trip SSIM about 0.92 on hard synthetic content, below the 0.95 the others keep). ' +
  'The price is the same for all three (per second of output).';
