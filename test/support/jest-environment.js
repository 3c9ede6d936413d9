// Jest's node environment, sharing every typed-array constructor with Node's own realm (Jest itself
// shares only ArrayBuffer and Uint8Array): native addons such as onnxruntime-node (Silero VAD,
// src/media/vad.ts) build their output arrays in Node's realm and check them with instanceof against
// the constructors of the code that called them, which under Jest live in the test's realm.
const { TestEnvironment } = require('jest-environment-node');

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
  }
}

module.exports = SharedTypedArraysEnvironment;
