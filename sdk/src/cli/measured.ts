// `jobs get`: what each item's output measured (read from the file by the service) and its checks,
// as lines a person reads — ✓ for a check passed, ✗ with what was expected and what was measured.
import { formatMeasured } from '../check-units.js';
import type { JobItem } from '../types.js';
import { table } from './format.js';

type Check = JobItem['checks'][number];

const num = (value: unknown, digits = 3): string =>
  typeof value === 'number' ? String(Number(value.toFixed(digits))) : '?';

/** One line on what the output is: picture or sound, as measured. */
function measuredLine(item: JobItem): string | null {
  const output = item.output;
  if (!output) return null;
  const video = output.video;
  if (video) {
    const parts = [
      [video.codec, video.profile, video.bit_depth ? `${video.bit_depth}-bit` : null].filter(Boolean).join(' '),
      `${video.width}×${video.height}`,
      video.frame_rate ? `${num(video.frame_rate)} fps` : null,
      video.frames !== undefined ? `${video.frames} frames` : null,
      video.duration_seconds !== undefined ? `${num(video.duration_seconds)} s` : null,
      [video.primaries, video.transfer, video.matrix].filter(Boolean).join('/'),
      video.light ? `mapping ${video.light.mapping}` : null,
      video.light?.mastering_peak_nits ? `mastering peak ${video.light.mastering_peak_nits} cd/m²` : null,
      video.light?.max_cll ? `MaxCLL ${video.light.max_cll} / MaxFALL ${video.light.max_fall} cd/m²` : null,
      video.audio_streams?.length ? `audio ${video.audio_streams.map((stream) => stream.codec).join(', ')}` : null,
    ];
    return parts.filter(Boolean).join(', ');
  }
  const audio = output.audio;
  if (!audio) return null;
  const parts = [
    audio.integrated_lufs !== null ? `${num(audio.integrated_lufs, 1)} LUFS` : null,
    audio.true_peak_dbtp !== null ? `true peak ${num(audio.true_peak_dbtp, 1)} dBTP` : null,
    audio.loudness_range_lu !== undefined && audio.loudness_range_lu !== null
      ? `LRA ${num(audio.loudness_range_lu, 1)} LU`
      : null,
    audio.duration_seconds !== undefined ? `${num(audio.duration_seconds)} s` : null,
    audio.speech_seconds !== null ? `${num(audio.speech_seconds, 1)} s of speech` : null,
  ];
  return parts.filter(Boolean).join(', ');
}

function checkRow(check: Check): string[] {
  const measured = formatMeasured(check);
  return check.passed
    ? ['✓', check.name, measured]
    : ['✗', check.name, `expected ${check.expected}, measured ${measured}`];
}

/** Per item: its measured output and its checks; empty when no item has either yet. */
export function measuredSummary(items: JobItem[]): string {
  // A server older than the checks sends items without `checks`.
  const checksOf = (item: JobItem): Check[] => item.checks ?? [];
  const blocks = items
    .filter((item) => measuredLine(item) || checksOf(item).length)
    .map((item) => {
      const line = measuredLine(item) ?? (item.output ? 'not measured' : 'no output');
      // The signed link, so a person can fetch the file (it expires: `jobs get` again for a fresh one).
      const download = item.output?.url ? `Download: ${item.output.url}\n` : '';
      const head = `Item ${item.index}: ${line}\n${download}`;
      const checks = checksOf(item);
      return checks.length ? head + table(['', 'CHECK', 'RESULT'], checks.map(checkRow)) : head;
    });
  return blocks.length ? `\n${blocks.join('\n')}` : '';
}
