// The job page's "Measured output and checks": per item, what its output file measured (read by the
// worker from the file itself) and each check it ran — passed ✓, or failed with expected vs measured.
import { formatMeasured } from '../../../sdk/src/check-units';
import type { Job } from '../api';
import { formatBytes, formatSeconds } from '../format';

type Item = Job['items'][number];
type Output = NonNullable<Item['output']>;
type Check = Item['checks'][number];

const maybe = <T,>(value: T | null | undefined, show: (value: T) => string): string =>
  value === null || value === undefined ? '—' : show(value);
const fixed = (digits: number) => (value: number) => String(Number(value.toFixed(digits)));

/** What a video or audio output measured, label by label. */
function measuredFacts(output: Output): [string, string][] {
  const video = output.video;
  if (video) {
    return [
      ['Container', maybe(video.container, (value) => value.toUpperCase())],
      ['Codec', `${video.codec} ${video.profile}`],
      ['Picture', `${video.width}×${video.height}, ${maybe(video.bit_depth, (bits) => `${bits}-bit`)}`],
      ['Frame rate', maybe(video.frame_rate, (fps) => `${fixed(3)(fps)} fps`)],
      ['Frames', maybe(video.frames, String)],
      ['Duration', maybe(video.duration_seconds, (seconds) => `${fixed(3)(seconds)} s`)],
      ['Size', maybe(video.bytes, formatBytes)],
      ['Colour', [video.primaries, video.transfer, video.matrix, video.range].filter(Boolean).join(' / ')],
      ['ST 2086', maybe(video.mastering_display, (md) => `${md.min_nits}–${md.max_nits} cd/m²`)],
      ['Content light', maybe(video.content_light, (cl) => `MaxCLL ${cl.max_cll}, MaxFALL ${cl.max_fall} cd/m²`)],
      [
        'Audio kept',
        maybe(video.audio_streams, (streams) => streams.map((s) => `${s.codec} ${s.channels} ch`).join(', ') || 'none'),
      ],
    ];
  }
  const audio = output.audio;
  if (!audio) return [];
  return [
    ['Container', maybe(audio.container, (value) => value.toUpperCase())],
    ['Integrated loudness', maybe(audio.integrated_lufs, (lufs) => `${fixed(1)(lufs)} LUFS`)],
    ['True peak', maybe(audio.true_peak_dbtp, (dbtp) => `${fixed(1)(dbtp)} dBTP`)],
    ['Loudness range', maybe(audio.loudness_range_lu, (lu) => `${fixed(1)(lu)} LU`)],
    ['Duration', maybe(audio.duration_seconds, formatSeconds)],
    ['Speech', maybe(audio.speech_seconds, (seconds) => `${formatSeconds(seconds)} detected`)],
    ['Size', maybe(audio.bytes, formatBytes)],
  ];
}

function CheckRow({ check }: { check: Check }) {
  const measured = formatMeasured(check);
  return (
    <tr className={check.passed ? 'check-passed' : 'check-failed'}>
      <td data-label="Check">
        <code>{check.name}</code>
      </td>
      <td data-label="Result">{check.passed ? '✓ passed' : '✗ failed'}</td>
      <td data-label="Expected">{check.expected}</td>
      <td data-label="Measured">{measured}</td>
    </tr>
  );
}

export function MeasuredOutputs({ items }: { items: Item[] }) {
  // A server older than the checks sends items without `checks`.
  const shown = items.filter((item) => item.output?.video || item.output?.audio || (item.checks ?? []).length);
  if (!shown.length) return null;
  return (
    <section aria-labelledby="measured-heading">
      <h2 id="measured-heading">Measured output and checks</h2>
      <p className="hint">
        Read from each output file after it was made. An item whose output fails a check is failed and not charged.
      </p>
      {shown.map((item) => (
        <div key={item.index} className="measured-item">
          <h3>Item {item.index}</h3>
          {item.output ? (
            <dl className="facts">
              {measuredFacts(item.output).map(([label, value]) => (
                <div key={label}>
                  <dt>{label}</dt>
                  <dd>{value}</dd>
                </div>
              ))}
            </dl>
          ) : (
            <p>No output was kept.</p>
          )}
          {(item.checks ?? []).length > 0 && (
            <table className="stack checks">
              <caption className="visually-hidden">Checks of item {item.index}</caption>
              <thead>
                <tr>
                  <th scope="col">Check</th>
                  <th scope="col">Result</th>
                  <th scope="col">Expected</th>
                  <th scope="col">Measured</th>
                </tr>
              </thead>
              <tbody>
                {item.checks.map((check) => (
                  <CheckRow key={check.name} check={check} />
                ))}
              </tbody>
            </table>
          )}
        </div>
      ))}
    </section>
  );
}
