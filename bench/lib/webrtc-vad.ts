// The service's former speech detector, kept only as the baseline of the VAD benchmark (bench/vad.ts):
// the WebRTC VAD (libfvad compiled to WASM, @echogarden/fvad-wasm, a devDependency). The service decides
// "is there speech" with Silero VAD (src/media/vad.ts).
//
// The package's JS loader is an ES module that needs `import.meta` (Jest's CommonJS runtime cannot load
// it), so this file instantiates the package's own fvad.wasm directly: the module imports just two
// functions (assert-fail, grow-heap) and exports libfvad's C API. Export names are the minified ones of
// version 0.2.0 (pinned in package.json); `loadFvadExports` checks their shape so an upgrade fails loudly.
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { VadResult } from '../../src/media/vad';

export const VAD_SAMPLE_RATE = 16000;
export type VadMode = 0 | 1 | 2 | 3;
export type VadFrameMs = 10 | 20 | 30;

export interface VadOptions {
  /** 0 = quality (most permissive) … 3 = very aggressive (fewest false positives). */
  mode?: VadMode;
  frameMs?: VadFrameMs;
  /** A voiced run shorter than this is treated as a click or a noise burst, not speech. */
  minRunMs?: number;
  /** Voiced runs separated by less than this silence belong to one segment. */
  mergeGapMs?: number;
  /** Speech needed, in qualifying runs, for `hasSpeech`. */
  minSpeechSeconds?: number;
}

export const DEFAULT_VAD_OPTIONS: Required<VadOptions> = {
  // Mode 2 rejects steady room tone and mains hum that mode 0 flags, and still keeps soft speech.
  mode: 2,
  frameMs: 30,
  // The detector flags the first 3–5 frames of any input while it adapts (seen on silence-like noise):
  // a run must outlast that to count.
  minRunMs: 200,
  mergeGapMs: 300,
  minSpeechSeconds: 0.3,
};

// The project's lib (es2023, @types/node 20) has no WebAssembly declarations: the little used here.
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
type WasmModule = object;
interface WasmApi {
  compile(bytes: Uint8Array): Promise<WasmModule>;
  instantiate(module: WasmModule, imports: object): Promise<{ exports: Record<string, unknown> }>;
}
const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

interface FvadExports {
  memory: WasmMemory;
  init(): void;
  fvadNew(): number;
  malloc(size: number): number;
  free(pointer: number): void;
  fvadFree(instance: number): void;
  fvadSetMode(instance: number, mode: number): number;
  fvadSetSampleRate(instance: number, rate: number): number;
  fvadProcess(instance: number, frame: number, length: number): number;
}

let compiled: Promise<WasmModule> | undefined;

function fvadWasmPath(): string {
  return join(dirname(require.resolve('@echogarden/fvad-wasm/package.json')), 'fvad.wasm');
}

async function compileFvad(): Promise<WasmModule> {
  compiled ??= readFile(fvadWasmPath()).then((bytes) => wasm.compile(bytes));
  return compiled;
}

/** One WASM instance per detector: its memory is private, so detectors never share state. */
async function loadFvadExports(): Promise<FvadExports> {
  const module = await compileFvad();
  // Filled in once the instance exists; the grow-heap import needs it and runs only after that.
  const state: { memory?: WasmMemory } = {};
  const imports = {
    a: {
      a: () => {
        throw new Error('libfvad assertion failed');
      },
      // emscripten_resize_heap: grow linear memory to at least the requested size.
      b: (requested: number) => {
        const memory = state.memory;
        if (!memory) return 0;
        const missing = requested - memory.buffer.byteLength;
        try {
          if (missing > 0) memory.grow(Math.ceil(missing / 65536));
          return 1;
        } catch {
          return 0; // emscripten's contract: 0 = could not grow, malloc then returns NULL
        }
      },
    },
  };
  const instance = await wasm.instantiate(module, imports);
  const e = instance.exports;
  const fn = (name: string): ((...args: number[]) => number) => {
    const value = e[name];
    if (typeof value !== 'function')
      throw new Error(`fvad.wasm export ${name} missing: @echogarden/fvad-wasm is not 0.2.0`);
    return value as (...args: number[]) => number;
  };
  // Duck-typed rather than instanceof: under Jest the test realm's WebAssembly global is a different object.
  const exportedMemory = e.c as WasmMemory | undefined;
  if (!exportedMemory || typeof exportedMemory.grow !== 'function') {
    throw new Error('fvad.wasm memory export missing: @echogarden/fvad-wasm is not 0.2.0');
  }
  state.memory = exportedMemory;
  const exports: FvadExports = {
    memory: exportedMemory,
    init: fn('d'),
    fvadNew: fn('e'),
    malloc: fn('f'),
    fvadFree: fn('h'),
    free: fn('i'),
    fvadSetMode: fn('j'),
    fvadSetSampleRate: fn('k'),
    fvadProcess: fn('l'),
  };
  exports.init();
  return exports;
}

/**
 * Streaming detector: push 16 kHz mono s16le PCM in chunks of any size, then `finish()`.
 * Memory stays constant whatever the input length (only runs and segments are kept).
 */
export class VoiceActivityDetector {
  private readonly samplesPerFrame: number;
  private readonly frameBytes: number;
  private pending = Buffer.alloc(0);
  private frames = 0;
  private voicedFrames = 0;
  private runStart = -1;
  private readonly runs: Array<[start: number, end: number]> = [];
  private disposed = false;

  private constructor(
    private readonly fvad: FvadExports,
    private readonly handle: number,
    private readonly framePointer: number,
    private readonly options: Required<VadOptions>,
  ) {
    this.samplesPerFrame = (VAD_SAMPLE_RATE * options.frameMs) / 1000;
    this.frameBytes = this.samplesPerFrame * 2;
  }

  static async create(options: VadOptions = {}): Promise<VoiceActivityDetector> {
    const merged = { ...DEFAULT_VAD_OPTIONS, ...options };
    const fvad = await loadFvadExports();
    const handle = fvad.fvadNew();
    if (handle === 0) throw new Error('fvad_new failed');
    if (fvad.fvadSetMode(handle, merged.mode) !== 0) throw new RangeError(`invalid VAD mode ${merged.mode}`);
    if (fvad.fvadSetSampleRate(handle, VAD_SAMPLE_RATE) !== 0) throw new Error('fvad rejected 16 kHz');
    if (![10, 20, 30].includes(merged.frameMs))
      throw new RangeError(`VAD frames are 10, 20 or 30 ms, got ${merged.frameMs}`);
    const pointer = fvad.malloc((VAD_SAMPLE_RATE * merged.frameMs * 2) / 1000);
    return new VoiceActivityDetector(fvad, handle, pointer, merged);
  }

  push(chunk: Buffer): void {
    if (this.disposed) throw new Error('VoiceActivityDetector used after finish()');
    let data = this.pending.length > 0 ? Buffer.concat([this.pending, chunk]) : chunk;
    let offset = 0;
    while (offset + this.frameBytes <= data.length) {
      this.processFrame(data.subarray(offset, offset + this.frameBytes));
      offset += this.frameBytes;
    }
    // Keep the partial frame (copied: the caller may reuse its chunk buffer).
    data = data.subarray(offset);
    this.pending = Buffer.from(data);
  }

  /** Ends the stream (a trailing partial frame is ignored), frees the WASM state and returns the result. */
  finish(): VadResult {
    if (!this.disposed) this.closeRun(this.frames);
    this.dispose();
    const frameSeconds = this.options.frameMs / 1000;
    const minRunFrames = Math.ceil(this.options.minRunMs / this.options.frameMs);
    const speechRuns = this.runs.filter(([start, end]) => end - start >= minRunFrames);
    const speechFrames = speechRuns.reduce((sum, [start, end]) => sum + end - start, 0);
    const speechSeconds = round3(speechFrames * frameSeconds);
    return {
      hasSpeech: speechSeconds >= this.options.minSpeechSeconds,
      speechSeconds,
      totalSeconds: round3(this.frames * frameSeconds),
      segments: mergeRuns(speechRuns, Math.ceil(this.options.mergeGapMs / this.options.frameMs)).map(
        ([start, end]) => ({
          startSeconds: round3(start * frameSeconds),
          endSeconds: round3(end * frameSeconds),
        }),
      ),
      frames: this.frames,
      voicedFrames: this.voicedFrames,
    };
  }

  /** Frees the WASM handle without a result (e.g. when the PCM producer failed). Safe to call twice. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.fvad.free(this.framePointer);
    this.fvad.fvadFree(this.handle);
  }

  private processFrame(frame: Buffer): void {
    // A fresh view each time: memory.grow() detaches the previous ArrayBuffer.
    const heap = new Uint8Array(this.fvad.memory.buffer, this.framePointer, this.frameBytes);
    heap.set(frame);
    const voiced = this.fvad.fvadProcess(this.handle, this.framePointer, this.samplesPerFrame);
    if (voiced < 0) throw new Error('fvad_process failed');
    if (voiced === 1) {
      this.voicedFrames++;
      if (this.runStart < 0) this.runStart = this.frames;
    } else {
      this.closeRun(this.frames);
    }
    this.frames++;
  }

  private closeRun(end: number): void {
    if (this.runStart >= 0) this.runs.push([this.runStart, end]);
    this.runStart = -1;
  }
}

/** Runs the detector over a whole PCM buffer (tests, short clips); pipelines stream instead. */
export async function detectSpeech(pcm: Buffer, options: VadOptions = {}): Promise<VadResult> {
  const detector = await VoiceActivityDetector.create(options);
  try {
    detector.push(pcm);
    return detector.finish();
  } finally {
    detector.dispose();
  }
}

function mergeRuns(runs: Array<[number, number]>, maxGapFrames: number): Array<[number, number]> {
  const merged: Array<[number, number]> = [];
  for (const [start, end] of runs) {
    const last = merged[merged.length - 1];
    if (last && start - last[1] <= maxGapFrames) last[1] = end;
    else merged.push([start, end]);
  }
  return merged;
}

function round3(value: number): number {
  return Math.round(value * 1000) / 1000;
}
