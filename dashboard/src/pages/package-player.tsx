// "Streaming package": each item made as an HLS package (output.playlist_url) plays on the job page through
// hls.js, loaded only here (its own chunk: most pages never need it), and its renditions are listed as the
// worker measured them. The rendition can be chosen (hls.js's currentLevel), so a person can watch each rung
// this browser decodes — Chromium on Linux has no HEVC decoder: those rungs say so instead of failing.
import { useEffect, useRef, useState } from 'react';
import type Hls from 'hls.js';
import type { Job } from '../api';
import { formatSeconds, formatTime } from '../format';

type Item = Job['items'][number];
type Rendition = NonNullable<NonNullable<Item['output']>['renditions']>[number];

const CODEC_NAMES: Record<string, string> = { h264: 'H.264', hevc: 'HEVC', av1: 'AV1' };

/** Which of our codecs an HLS CODECS entry is (avc1.64001f → h264). */
function codecOf(codecs: string | undefined): string | null {
  if (!codecs) return null;
  if (/^avc[13]\./.test(codecs)) return 'h264';
  if (/^(hvc1|hev1)\./.test(codecs)) return 'hevc';
  if (/^av01\./.test(codecs)) return 'av1';
  return null;
}

function bitrate(bitsPerSecond: number): string {
  return bitsPerSecond >= 1_000_000
    ? `${(bitsPerSecond / 1_000_000).toFixed(1)} Mb/s`
    : `${Math.round(bitsPerSecond / 1000)} kb/s`;
}

function rungName(rendition: { codec: string; width: number; height: number; video_range: string }): string {
  return `${CODEC_NAMES[rendition.codec] ?? rendition.codec} ${rendition.width}×${rendition.height} ${rendition.video_range}`;
}

/** A rendition hls.js kept (this browser can decode it): its index among hls.levels and its name. */
interface PlayableLevel {
  index: number;
  name: string;
  codec: string;
  height: number;
}

function PackagePlayer({ item }: { item: Item }) {
  const output = item.output!;
  const renditions = output.renditions ?? [];
  const video = useRef<HTMLVideoElement>(null);
  const player = useRef<Hls | null>(null);
  const [levels, setLevels] = useState<PlayableLevel[] | null>(null);
  const [chosen, setChosen] = useState(-1);
  const [playing, setPlaying] = useState<string | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const playlistUrl = output.playlist_url!;

  useEffect(() => {
    let cancelled = false;
    void import('hls.js').then(({ default: HlsPlayer }) => {
      if (cancelled || !video.current) return;
      if (!HlsPlayer.isSupported()) {
        setFailure('This browser cannot play HLS through Media Source Extensions.');
        return;
      }
      // No worker: the page's Content-Security-Policy allows scripts from this origin's files only.
      const hls = new HlsPlayer({ enableWorker: false, capLevelToPlayerSize: false });
      player.current = hls;
      hls.on(HlsPlayer.Events.MANIFEST_PARSED, () => {
        setLevels(
          hls.levels.map((level, index) => {
            const codec = codecOf(level.videoCodec) ?? level.videoCodec ?? '?';
            const range = renditions.find((r) => r.codec === codec && r.height === level.height)?.video_range ?? '';
            return {
              index,
              codec,
              height: level.height,
              name: rungName({ codec, width: level.width, height: level.height, video_range: range }),
            };
          }),
        );
      });
      hls.on(HlsPlayer.Events.LEVEL_SWITCHED, (_event, data) => {
        const level = hls.levels[data.level];
        const codec = codecOf(level?.videoCodec) ?? '?';
        const range = renditions.find((r) => r.codec === codec && r.height === level?.height)?.video_range ?? '';
        if (level) setPlaying(rungName({ codec, width: level.width, height: level.height, video_range: range }));
      });
      hls.on(HlsPlayer.Events.ERROR, (_event, data) => {
        if (data.fatal) setFailure(`The player stopped: ${data.details}. Reload the page for a fresh link.`);
      });
      hls.loadSource(playlistUrl);
      hls.attachMedia(video.current);
    });
    return () => {
      cancelled = true;
      player.current?.destroy();
      player.current = null;
    };
    // The link changes on every read of the job (a fresh signature): keep playing the one first shown.
  }, [output.asset_id]);

  const choose = (index: number) => {
    setChosen(index);
    // -1: hls.js chooses by bandwidth; otherwise that level, now (buffer flushed).
    if (player.current) player.current.currentLevel = index;
  };

  const playable = (rendition: Rendition) =>
    levels === null
      ? null
      : levels.some((level) => level.codec === rendition.codec && level.height === rendition.height);
  const selectId = `rendition-${item.index}`;

  return (
    <figure className="package-player" data-item={item.index}>
      <video
        ref={video}
        controls
        playsInline
        preload="metadata"
        aria-label={`Item ${item.index}: the package playing`}
      />
      <div className="package-controls">
        <label htmlFor={selectId}>Rendition</label>
        <select id={selectId} value={chosen} onChange={(event) => choose(Number(event.target.value))}>
          <option value={-1}>Automatic (by bandwidth)</option>
          {(levels ?? []).map((level) => (
            <option key={level.index} value={level.index}>
              {level.name}
            </option>
          ))}
        </select>
        <span className="hint" aria-live="polite" data-playing={playing ?? ''}>
          {playing ? `Playing ${playing}` : 'Not started'}
        </span>
      </div>
      {failure && (
        <p className="hint" role="alert">
          {failure}
        </p>
      )}
      <figcaption>
        Item {item.index}: {renditions.length} renditions · {formatSeconds(item.duration_seconds)} ·{' '}
        <a href={playlistUrl}>Master playlist</a> (signed, for any HLS player; works until{' '}
        {formatTime(output.playlist_expires_at ?? output.expires_at)})
      </figcaption>
      <table className="stack renditions">
        <caption className="visually-hidden">Renditions of item {item.index}</caption>
        <thead>
          <tr>
            <th scope="col">Codec</th>
            <th scope="col">Picture</th>
            <th scope="col">Range</th>
            <th scope="col">Bandwidth (peak / average)</th>
            <th scope="col">Segments</th>
            <th scope="col">Plays in this browser</th>
          </tr>
        </thead>
        <tbody>
          {renditions.map((rendition) => {
            const can = playable(rendition);
            return (
              <tr key={`${rendition.codec}-${rendition.height}-${rendition.video_range}`}>
                <td data-label="Codec">{CODEC_NAMES[rendition.codec] ?? rendition.codec}</td>
                <td data-label="Picture">
                  {rendition.width}×{rendition.height} · {rendition.frame_rate} fps
                </td>
                <td data-label="Range">{rendition.video_range}</td>
                <td data-label="Bandwidth">
                  {bitrate(rendition.bandwidth)} / {bitrate(rendition.average_bandwidth)}
                </td>
                <td data-label="Segments">{rendition.segments}</td>
                <td data-label="Plays here">{can === null ? '…' : can ? 'Yes' : 'No (no decoder here)'}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </figure>
  );
}

export function PackagePlayers({ items }: { items: Item[] }) {
  const packaged = items.filter((item) => item.output?.playlist_url);
  if (packaged.length === 0) return null;
  return (
    <section aria-labelledby="package-heading">
      <h2 id="package-heading">Streaming package</h2>
      <p className="hint">
        Each package is an HLS ladder: the player switches between renditions by bandwidth, or plays the one you choose.
        HDR renditions look dim or flat on an SDR screen.
      </p>
      {packaged.map((item) => (
        <PackagePlayer key={item.index} item={item} />
      ))}
    </section>
  );
}
