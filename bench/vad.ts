// Benchmark: speech detection, the former detector (WebRTC VAD, bench/lib/webrtc-vad.ts) against the
// service's (Silero VAD through onnxruntime-node, src/media/vad.ts), on the labelled set made at run time
// (test/fixtures/vad-set.ts). Per class of clip: precision and recall of the detected speech seconds
// against the labels (speech classes), and the seconds called speech in clips without voice; then the cost
// per minute of audio (a 60 s clip read by each detector, after a warm-up; medians of three).
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { detectSpeech as silero, type VadResult } from '../src/media/vad';
import { buildVadSet, overlapSeconds, pcmOf, totalSeconds, type LabelledClip } from '../test/fixtures/vad-set';
import { detectSpeech as webrtc } from './lib/webrtc-vad';
import { compare, type BenchContext, type BenchResult } from './lib/report';
import { median, round } from './lib/stats';

const run = promisify(execFile);
const DETECTORS = { webrtc, silero } as const;
type Detector = keyof typeof DETECTORS;

interface ClassScore {
  clips: number;
  labelled: number;
  detected: number;
  hit: number;
  flagged: number;
}

const segmentsOf = (result: VadResult) =>
  result.segments.map((segment): [number, number] => [segment.startSeconds, segment.endSeconds]);

export async function benchVad(context: BenchContext): Promise<BenchResult> {
  const dir = await mkdtemp(join(tmpdir(), 'mediajobs-bench-vad-'));
  try {
    const set = await buildVadSet(dir);
    const scores: Record<Detector, Record<string, ClassScore>> = { webrtc: {}, silero: {} };
    const perClip: Record<string, unknown>[] = [];
    for (const clip of set) {
      const pcm = await pcmOf(clip);
      const row: Record<string, unknown> = {
        clip: clip.name,
        kind: clip.kind,
        label_s: round(totalSeconds(clip.speech), 2),
      };
      for (const name of Object.keys(DETECTORS) as Detector[]) {
        const result = await DETECTORS[name](pcm);
        const detected = segmentsOf(result);
        const score = (scores[name][clip.kind] ??= { clips: 0, labelled: 0, detected: 0, hit: 0, flagged: 0 });
        score.clips++;
        score.labelled += totalSeconds(clip.speech);
        score.detected += totalSeconds(detected);
        score.hit += overlapSeconds(detected, clip.speech);
        if (result.hasSpeech) score.flagged++;
        row[`${name}_s`] = round(totalSeconds(detected), 2);
        row[`${name}_speech`] = result.hasSpeech;
      }
      perClip.push(row);
    }
    const table = classTable(set, scores);
    context.log(table);

    const minute = await minuteOfSpeech(dir, set);
    const cost: Record<Detector, number[]> = { webrtc: [], silero: [] };
    for (const name of Object.keys(DETECTORS) as Detector[]) {
      await DETECTORS[name](minute.subarray(0, 32000 * 2)); // warm-up: the model's session, the WASM module
      for (let round = 0; round < 3; round++) {
        const started = performance.now();
        await DETECTORS[name](minute);
        cost[name].push(performance.now() - started);
      }
    }
    context.log(
      `vad: ms per minute of audio — webrtc ${round(median(cost.webrtc))}, silero ${round(median(cost.silero))}`,
    );
    const silero = scores.silero;
    const speechKinds = Object.keys(silero).filter((kind) => silero[kind].labelled > 0);
    const quietKinds = Object.keys(silero).filter((kind) => silero[kind].labelled === 0);
    return compare(
      'vad',
      'Speech detection on the labelled set (precision/recall of speech seconds per class) and its cost per minute of audio: Silero VAD (ours) against the WebRTC VAD it replaced (bare)',
      { metric: 'ms per minute of audio', ours: cost.silero, bare: cost.webrtc, higherIsBetter: false },
      {
        text: 'Silero: precision ≥ 0.85 and recall ≥ 0.9 per speech class; no speech in tones, music, noise, silence',
        met: () =>
          speechKinds.every((kind) => silero[kind].hit / silero[kind].detected >= 0.85) &&
          speechKinds.every((kind) => silero[kind].hit / silero[kind].labelled >= 0.9) &&
          quietKinds.every((kind) => silero[kind].flagged === 0),
      },
      {
        table,
        classes: Object.fromEntries(
          (Object.keys(DETECTORS) as Detector[]).map((name) => [name, summarise(scores[name])]),
        ),
        ms_per_minute: { webrtc: round(median(cost.webrtc)), silero: round(median(cost.silero)) },
        realtime_factor: {
          webrtc: round(60_000 / median(cost.webrtc)),
          silero: round(60_000 / median(cost.silero)),
        },
        clips: perClip,
      },
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function summarise(scores: Record<string, ClassScore>): Record<string, Record<string, number>> {
  return Object.fromEntries(
    Object.entries(scores).map(([kind, score]): [string, Record<string, number>] => [
      kind,
      score.labelled > 0
        ? {
            clips: score.clips,
            precision: round(score.hit / Math.max(score.detected, 1e-9), 3),
            recall: round(score.hit / score.labelled, 3),
          }
        : { clips: score.clips, false_speech_s: round(score.detected, 2), clips_flagged: score.flagged },
    ]),
  );
}

/** The per-class table, Markdown (docs/performance.md carries the latest). */
function classTable(set: LabelledClip[], scores: Record<Detector, Record<string, ClassScore>>): string {
  const kinds = [...new Set(set.map((clip) => clip.kind))];
  const cell = (score: ClassScore) =>
    score.labelled > 0
      ? `P ${round(score.hit / Math.max(score.detected, 1e-9), 2)} / R ${round(score.hit / score.labelled, 2)}`
      : `${round(score.detected, 1)} s called speech, ${score.flagged}/${score.clips} clips flagged`;
  return [
    '| class (clips) | WebRTC VAD (before) | Silero VAD (now) |',
    '|---|---|---|',
    ...kinds.map(
      (kind) =>
        `| ${kind} (${scores.silero[kind].clips}) | ${cell(scores.webrtc[kind])} | ${cell(scores.silero[kind])} |`,
    ),
  ].join('\n');
}

/** 60 s of speech in pink noise (the set's clip looped), as 16 kHz mono s16le PCM. */
async function minuteOfSpeech(dir: string, set: LabelledClip[]): Promise<Buffer> {
  const source = set.find((clip) => clip.kind === 'speech in noise') ?? set[0];
  const path = join(dir, 'minute.pcm');
  await run('ffmpeg', [
    '-hide_banner',
    '-loglevel',
    'error',
    '-y',
    '-stream_loop',
    '-1',
    '-i',
    source.path,
    '-t',
    '60',
    '-f',
    's16le',
    '-ac',
    '1',
    '-ar',
    '16000',
    path,
  ]);
  return readFile(path);
}
