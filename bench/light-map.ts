// Benchmark: what an sdr2hdr item's light map (src/media/light-map.ts, rendered after the output is made)
// costs against the encode it follows. The 10 s 1080p clip is encoded once per mapping with the worker's
// pipeline (balanced preset); the map of each output is rendered three times (the worker's exact call:
// probe of the output, then renderLightMap). Reported: the medians, and the map's share of the encode.
import { DEFAULT_HDR_ENCODE } from '../src/media/encoder-settings';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Mapping } from '../src/media/hdr-mapping';
import { renderLightMap } from '../src/media/light-map';
import { convertSdrToHdr } from '../src/media/pipelines';
import { probeMedia } from '../src/media/probe';
import { QUALITY_PRESETS } from '../src/media/quality-presets';
import { sdrClip } from './lib/media';
import { compare, type BenchContext, type BenchResult } from './lib/report';
import { median, round } from './lib/stats';

const RENDERS = 3;

async function probe(path: string) {
  const outcome = await probeMedia(path, { api: 'sdr2hdr' });
  if (!outcome.ok || !outcome.probe.video) throw new Error(`light-map bench: ${path} does not probe`);
  return outcome.probe;
}

export async function benchLightMap(context: BenchContext): Promise<BenchResult> {
  const [width, height, seconds] = context.quick ? [640, 360, 2] : [1920, 1080, 10];
  const clip = await sdrClip(width, height, seconds);
  const dir = await mkdtemp(join(tmpdir(), 'mediajobs-bench-light-map-'));
  try {
    const encodes: number[] = [];
    const maps: number[] = [];
    const details: Record<string, unknown> = { clip: `${width}x${height} ${seconds} s`, renders_per_output: RENDERS };
    for (const mapping of ['reference', 'expand'] as Mapping[]) {
      const output = join(dir, `${mapping}.mp4`);
      const encoding = performance.now();
      const made = await convertSdrToHdr({
        ...DEFAULT_HDR_ENCODE,
        input: clip,
        output,
        probe: await probe(clip),
        container: 'mp4',
        mapping,
        ...QUALITY_PRESETS.balanced,
      });
      if (!made.ok) throw new Error(`light-map bench: the ${mapping} encode failed`);
      const encodeSeconds = (performance.now() - encoding) / 1000;
      encodes.push(encodeSeconds);
      const renders: number[] = [];
      for (let n = 0; n < RENDERS; n++) {
        const png = join(dir, `${mapping}-${n}.png`);
        const rendering = performance.now();
        const probed = await probe(output);
        const run = await renderLightMap({
          source: clip,
          output,
          png,
          transfer: 'pq',
          width: probed.video!.width,
          height: probed.video!.height,
          durationSeconds: probed.durationSeconds,
          sourceColour: (await probe(clip)).video!,
        });
        if (run.status !== 'succeeded') throw new Error(`light-map bench: render failed: ${run.stderrTail.join(' ')}`);
        renders.push((performance.now() - rendering) / 1000);
        details[`${mapping}_png_bytes`] = (await stat(png)).size;
      }
      maps.push(...renders);
      details[`${mapping}_encode_s`] = round(encodeSeconds);
      details[`${mapping}_light_map_s`] = round(median(renders));
      context.log(`light-map: ${mapping} encode ${round(encodeSeconds)} s, light map ${round(median(renders))} s`);
    }
    details.light_map_share_of_encode = round(median(maps) / median(encodes), 3);
    return compare(
      'light-map',
      'Rendering an sdr2hdr item’s light map (probe of the output + one ffmpeg run) against the encode it follows',
      { metric: 'seconds', ours: maps, bare: encodes, higherIsBetter: false },
      { text: 'light map ≤ 5 % of the encode', met: (ratio) => ratio <= 0.05 },
      details,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
