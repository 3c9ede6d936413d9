// Speech detection (Silero VAD through onnxruntime-node, src/media/vad.ts) on a labelled set made here at
// run time (test/fixtures/vad-set.ts: espeak-ng speech at several speeds and levels, over noise, under
// music beds; tones, music without voice, noise, silence). Each speech clip's detected speech seconds
// against its label: precision ≥ 0.85 and recall ≥ 0.9; no clip without voice has speech. And through the
// audio pipeline (real ffmpeg): `no_speech_detected` for tones, music without voice and noise, never for
// speech at -30 dBFS under a music bed.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { normaliseSpeechLoudness } from '../../src/media/pipelines';
import { probeMedia } from '../../src/media/probe';
import { detectSpeech, VoiceActivityDetector, type VadResult } from '../../src/media/vad';
import { buildVadSet, overlapSeconds, pcmOf, totalSeconds, type LabelledClip } from '../fixtures/vad-set';

let dir: string;
let set: LabelledClip[];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mediajobs-vad-set-'));
  set = await buildVadSet(dir);
}, 120_000);
afterAll(() => rm(dir, { recursive: true, force: true }));

const clip = (name: string) => {
  const found = set.find((entry) => entry.name === name);
  if (!found) throw new Error(`no clip ${name}`);
  return found;
};
const segmentsOf = (result: VadResult) =>
  result.segments.map((segment): [number, number] => [segment.startSeconds, segment.endSeconds]);

describe('Silero VAD on the labelled set', () => {
  it('finds the speech of every speech clip: precision ≥ 0.85 and recall ≥ 0.9 of its speech seconds', async () => {
    const speech = set.filter((entry) => entry.speech.length > 0);
    expect(speech.length).toBeGreaterThanOrEqual(8);
    const scores: Record<string, { precision: number; recall: number }> = {};
    for (const entry of speech) {
      const detected = segmentsOf(await detectSpeech(await pcmOf(entry)));
      const hit = overlapSeconds(detected, entry.speech);
      scores[entry.name] = {
        precision: Math.round((hit / Math.max(totalSeconds(detected), 1e-9)) * 1000) / 1000,
        recall: Math.round((hit / totalSeconds(entry.speech)) * 1000) / 1000,
      };
    }
    for (const [name, score] of Object.entries(scores)) {
      expect({ name, precisionOk: score.precision >= 0.85, recallOk: score.recall >= 0.9, ...score }).toMatchObject({
        name,
        precisionOk: true,
        recallOk: true,
      });
    }
  }, 120_000);

  it('finds no speech in tones, music without voice, noise or silence', async () => {
    const none = set.filter((entry) => entry.speech.length === 0);
    expect(new Set(none.map((entry) => entry.kind))).toEqual(new Set(['tone', 'music', 'noise', 'silence']));
    for (const entry of none) {
      const result = await detectSpeech(await pcmOf(entry));
      expect({ name: entry.name, hasSpeech: result.hasSpeech, speechSeconds: result.speechSeconds }).toEqual({
        name: entry.name,
        hasSpeech: false,
        speechSeconds: 0,
      });
    }
  }, 120_000);

  it('gives the same answer whatever the chunking of the PCM stream (odd sizes split samples)', async () => {
    const pcm = await pcmOf(clip('speech normal'));
    const whole = await detectSpeech(pcm);
    const detector = await VoiceActivityDetector.create();
    for (let offset = 0; offset < pcm.length; offset += 777) void detector.push(pcm.subarray(offset, offset + 777));
    expect(await detector.finish()).toEqual(whole);
    expect(whole.totalSeconds).toBeCloseTo(pcm.length / 2 / 16000, 3);
  });
});

describe('the audio pipeline says no_speech_detected from the model', () => {
  async function normalise(entry: LabelledClip) {
    const probed = await probeMedia(entry.path, { api: 'audio' });
    if (!probed.ok) throw new Error(`set clip refused: ${probed.code}`);
    return normaliseSpeechLoudness({
      input: entry.path,
      output: join(dir, `${entry.name}.out.wav`),
      probe: probed.probe,
      targetLufs: -16,
      container: 'wav',
      onProgress: () => undefined,
    });
  }

  it.each([
    'sine 440 Hz',
    '1 kHz beeps',
    'music: arpeggio, bass, hi-hat',
    'music: melody with vibrato',
    'white noise (loud)',
  ])('%s → no_speech_detected', async (name) => {
    expect(await normalise(clip(name))).toMatchObject({ ok: false, code: 'no_speech_detected' });
  });

  it('speech at -30 dBFS under a music bed at -36 dBFS is normalised, its speech seconds measured', async () => {
    const entry = clip('speech -30 dBFS under music -36 dBFS');
    const result = await normalise(entry);
    expect(result).toMatchObject({ ok: true });
    if (!result.ok) return;
    expect(result.speech.speechSeconds).toBeGreaterThan(0.9 * totalSeconds(entry.speech));
    expect(result.speech.speechSeconds).toBeLessThan(1.15 * totalSeconds(entry.speech));
  });
});
