// Credits charged per day as plain SVG bars (no chart library: 30 bars need no more), with the
// numbers also in a table for screen readers and for anyone who wants them exactly.
import type { Usage } from './api';
import { formatCredits, formatDate, formatNumber, formatUsd } from './format';

const WIDTH = 720;
const HEIGHT = 180;
const PAD_LEFT = 44;
const PAD_BOTTOM = 22;

export function DailyChargesChart({ usage }: { usage: Usage }) {
  const days = usage.days;
  const max = Math.max(1, ...days.map((day) => day.charged_credits));
  const plotWidth = WIDTH - PAD_LEFT;
  const plotHeight = HEIGHT - PAD_BOTTOM - 8;
  const slot = plotWidth / Math.max(1, days.length);
  const summary = `Credits charged per day over the last ${days.length} days: ${formatCredits(usage.total_charged_credits)} in total (${formatUsd(usage.total_charged_usd)}), at most ${formatNumber(max)} on one day.`;
  return (
    <figure className="chart">
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label={summary}>
        <line x1={PAD_LEFT} y1={8} x2={PAD_LEFT} y2={HEIGHT - PAD_BOTTOM} className="axis" />
        <line x1={PAD_LEFT} y1={HEIGHT - PAD_BOTTOM} x2={WIDTH} y2={HEIGHT - PAD_BOTTOM} className="axis" />
        <text x={PAD_LEFT - 6} y={14} textAnchor="end" className="tick">
          {formatNumber(max)}
        </text>
        <text x={PAD_LEFT - 6} y={HEIGHT - PAD_BOTTOM} textAnchor="end" className="tick">
          0
        </text>
        {days.map((day, index) => {
          const height = (day.charged_credits / max) * plotHeight;
          return (
            <rect
              key={day.date}
              x={PAD_LEFT + index * slot + slot * 0.15}
              y={HEIGHT - PAD_BOTTOM - height}
              width={slot * 0.7}
              height={Math.max(height, day.charged_credits > 0 ? 1 : 0)}
              className="bar"
            >
              <title>{`${formatDate(day.date)}: ${formatNumber(day.charged_credits)} credits`}</title>
            </rect>
          );
        })}
        {days.length > 0 && (
          <>
            <text x={PAD_LEFT} y={HEIGHT - 4} className="tick">
              {formatDate(days[0].date)}
            </text>
            <text x={WIDTH} y={HEIGHT - 4} textAnchor="end" className="tick">
              {formatDate(days[days.length - 1].date)}
            </text>
          </>
        )}
      </svg>
      <figcaption>{summary}</figcaption>
      <details>
        <summary>Show the numbers</summary>
        <table>
          <caption className="visually-hidden">Credits charged per day</caption>
          <thead>
            <tr>
              <th scope="col">Day (UTC)</th>
              <th scope="col">Credits</th>
              <th scope="col">USD</th>
            </tr>
          </thead>
          <tbody>
            {days.map((day) => (
              <tr key={day.date}>
                <td>{formatDate(day.date)}</td>
                <td>{formatNumber(day.charged_credits)}</td>
                <td>{formatUsd(day.charged_usd)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}
