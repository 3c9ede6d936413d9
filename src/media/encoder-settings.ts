// The HDR encode's customer-visible settings and their defaults (mastering peak, x265 preset and CRF):
// values only, so the submit can validate and price with them without loading the argv builder.

export const DEFAULT_PEAK_NITS = 1000;

export const X265_PRESETS = [
  'ultrafast',
  'superfast',
  'veryfast',
  'faster',
  'fast',
  'medium',
  'slow',
  'slower',
  'veryslow',
  'placebo',
] as const;
export type X265Preset = (typeof X265_PRESETS)[number];

/**
 * Default encoder setting. Round-trip fidelity (PQ output → BT.709 with zscale npl=203 → luma SSIM
 * against the source; method in test/media/sdr2hdr-quality.spec.ts), testsrc2 tagged bt709, measured here:
 *   1920×1080 10 s:  veryfast CRF 12 → 0.952 (20 s encode on an idle 2-core box, 13.7 MB) | veryfast 16 → 0.944
 *                    | medium 16 → 0.963 (37 s, 7.6 MB)
 *   640×360 10 s:    colour step alone (no encode) → 0.959 — the ceiling, set by 4:2:0 chroma resampling
 *                    leaking into luma at testsrc2's saturated edges (4:4:4 gives 0.994); ultrafast 16 → 0.854,
 *                    veryfast 16 → 0.913, veryfast 12 → 0.935, medium 16 → 0.929, veryfast 4 → 0.951.
 *                    Against the colour-step-only round trip (the encoder's own loss): veryfast 12 → 0.957,
 *                    veryfast 16 → 0.936, medium 16 → 0.953, ultrafast 16 → 0.874.
 *   640×360 2 s (the quality test's fixture): veryfast 12 → 0.937 end to end, 0.954 encoder only.
 * docs/media.md's higher figures (colour step 0.981) did not reproduce with this method. veryfast CRF 12 is the
 * fastest setting found that keeps ≥ 0.95 at 1080p end to end and for the encoder alone at 360p.
 * Customers who want smaller files or faster jobs trade quality explicitly via preset/crf.
 */
export const DEFAULT_X265_PRESET: X265Preset = 'veryfast';
export const DEFAULT_X265_CRF = 12;
