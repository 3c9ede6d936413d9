// "Where the light went": each sdr2hdr item's light map (the PNG the worker made: the source frame beside
// the output frame in false colour, over a small legend of its own), made legible on the page at any width —
// the page draws the legend itself from the same bands the PNG is coloured with (src/media/light-bands.ts),
// in readable text; labels say which half is which; the map opens full size in a tab of its own; and the
// caption says where in the item the frame is (light_map_frame_seconds), not "the middle".
import { LIGHT_BANDS } from '../../../src/media/light-bands';
import type { Job } from '../api';
import { formatSeconds } from '../format';

type Item = Job['items'][number];

/** A band's range as a person reads it: "<1", "1–10", "3000+" (the PNG's labels use a hyphen). */
function bandLabel(label: string): string {
  return label.replace('-', '–');
}

export function LightMapLegend({ id }: { id: string }) {
  return (
    <div className="light-legend">
      <p id={id} className="light-legend-title">
        Brightness of the output, in cd/m² (nits)
      </p>
      <ul aria-labelledby={id}>
        {LIGHT_BANDS.map((band) => (
          <li key={band.label}>
            <span className="swatch" style={{ backgroundColor: `#${band.colour}` }} aria-hidden="true" />
            {bandLabel(band.label)}
          </li>
        ))}
      </ul>
    </div>
  );
}

/** "the frame at 8.4 s of 10 s" when the view says where it is; older jobs only say "a frame". */
export function frameWhere(item: Item): string {
  const at = item.output?.light_map_frame_seconds;
  return typeof at === 'number'
    ? `the frame at ${formatSeconds(at)} of ${formatSeconds(item.duration_seconds)}`
    : 'a frame near the middle';
}

export function LightMaps({ items, describe }: { items: Item[]; describe: (item: Item) => string | null }) {
  const mapped = items.filter((item) => item.output?.light_map_url);
  if (mapped.length === 0) return null;
  return (
    <section aria-labelledby="light-heading">
      <h2 id="light-heading">Where the light went</h2>
      <p className="hint">
        An HDR picture cannot be judged on an SDR screen: each map shows one frame of the source (left) beside the same
        frame of the output coloured by its brightness (right), with the colours explained below it.
      </p>
      {mapped.map((item) => {
        const url = item.output!.light_map_url!;
        const described = describe(item);
        return (
          <figure key={item.index} className="light-map">
            <div className="light-map-frame">
              <div className="light-map-halves" aria-hidden="true">
                <span>Source (SDR)</span>
                <span>Output, false colour</span>
              </div>
              <a href={url} target="_blank" rel="noreferrer" className="light-map-image">
                <img
                  src={url}
                  alt={`Item ${item.index}: the source frame beside the output frame as a false-colour map of its light in cd/m²`}
                  loading="lazy"
                />
              </a>
            </div>
            <LightMapLegend id={`light-legend-${item.index}`} />
            <figcaption>
              Item {item.index}: {frameWhere(item)}
              {described ? ` · ${described}` : ''} ·{' '}
              <a href={url} target="_blank" rel="noreferrer">
                Open the map full size
              </a>
            </figcaption>
          </figure>
        );
      })}
    </section>
  );
}
