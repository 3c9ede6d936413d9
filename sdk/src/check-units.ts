// How a check's measured value reads: with its unit where the check measures a quantity (the API
// sends the bare number; its `expected` says the unit in words). Shared by the CLI and the dashboard.

/** The unit of each numeric check's measured value (the names of OutputCheckResponse). */
const UNITS: Record<string, string> = { duration: 's', integrated_loudness: 'LUFS', true_peak: 'dBTP' };

/** "10.01 s", "-16.1 LUFS", "0.9612" (a ratio has no unit); "—" when nothing was measured. */
export function formatMeasured(check: { name: string; measured: number | string | null }): string {
  if (check.measured === null) return '—';
  const unit = typeof check.measured === 'number' ? UNITS[check.name] : undefined;
  return unit ? `${check.measured} ${unit}` : String(check.measured);
}
