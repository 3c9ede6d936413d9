// Jest's node environment, sharing every typed-array constructor with Node's own realm (Jest itself
// shares only ArrayBuffer and Uint8Array): native addons such as onnxruntime-node (Silero VAD,
// src/media/vad.ts) build their output arrays in Node's realm and check them with instanceof against
// the constructors of the code that called them, which under Jest live in the test's realm.
//
// It also records what each test file cost: the environment is set up and torn down in the process that
// runs the file (Jest's own with --runInBand, else the Jest worker's), so the CPU seconds of that process
// and everything it started (servers, workers, ffmpeg, Chromium; test/support/process-cpu.js) between the
// two are the file's, even with other files running in other workers. One JSON line per file is appended
// to .jest-cpu.jsonl at the root; `node scripts/test-times.js` reads it.
const { appendFileSync } = require('node:fs');
const path = require('node:path');
const { TestEnvironment } = require('jest-environment-node');
const { treeCpuSeconds } = require('./process-cpu.js');

const SHARED = [
  'Int8Array',
  'Uint8ClampedArray',
  'Int16Array',
  'Uint16Array',
  'Int32Array',
  'Uint32Array',
  'Float32Array',
  'Float64Array',
  'BigInt64Array',
  'BigUint64Array',
];

class SharedTypedArraysEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    for (const name of SHARED) this.global[name] = globalThis[name];
    this.rootDir = config.projectConfig.rootDir;
    this.testPath = context.testPath;
  }

  async setup() {
    this.startedAt = Date.now();
    this.cpuAtStart = treeCpuSeconds();
    await super.setup();
  }

  async teardown() {
    await super.teardown();
    try {
      const line = {
        file: path.relative(this.rootDir, this.testPath),
        cpu: Number((treeCpuSeconds() - this.cpuAtStart).toFixed(2)),
        wall: Number(((Date.now() - this.startedAt) / 1000).toFixed(2)),
        run: Number(process.env.TEST_RUN_PID) || process.pid,
        at: new Date(this.startedAt).toISOString(),
      };
      appendFileSync(path.join(this.rootDir, '.jest-cpu.jsonl'), `${JSON.stringify(line)}\n`);
    } catch {
      // A record that could not be written costs the measurement, never the test run.
    }
  }
}

module.exports = SharedTypedArraysEnvironment;
