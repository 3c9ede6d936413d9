// The light map's bands (cd/m²) and their colours: one list for the PNG's false colour and legend
// (light-map.ts) and for the legend the dashboard draws beside it (dashboard/src/pages/light-map.tsx),
// so the two cannot disagree. No imports: the dashboard's bundle takes this file as it is.

/** Upper edges (cd/m²) and colours of the bands; edges sit between the levels the mappings aim at. */
export const LIGHT_BANDS: { below: number; colour: string; label: string }[] = [
  { below: 1, colour: '08306b', label: '<1' },
  { below: 10, colour: '2171b5', label: '1-10' },
  { below: 50, colour: '41ab5d', label: '10-50' },
  { below: 150, colour: 'a1d99b', label: '50-150' },
  { below: 400, colour: 'bdbdbd', label: '150-400' },
  { below: 800, colour: 'fee391', label: '400-800' },
  { below: 1500, colour: 'fe9929', label: '800-1500' },
  { below: 3000, colour: 'e31a1c', label: '1500-3000' },
  { below: Infinity, colour: 'ff66ff', label: '3000+' },
];

export function bandOf(nits: number): (typeof LIGHT_BANDS)[number] {
  return LIGHT_BANDS.find((band) => nits < band.below) ?? LIGHT_BANDS[LIGHT_BANDS.length - 1];
}
