// Package-level promises: no runtime dependency, and the User-Agent version matches package.json.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { test } from 'node:test';
import { VERSION } from '../src/index.js';

const manifest = JSON.parse(readFileSync(resolve(__dirname, '..', '..', 'package.json'), 'utf8')) as {
  version: string;
  dependencies?: Record<string, string>;
  bin: Record<string, string>;
};

test('VERSION (sent in User-Agent) equals package.json version', () => {
  assert.equal(VERSION, manifest.version);
});

test('the package has no runtime dependencies and ships the mediajobs bin', () => {
  assert.equal(manifest.dependencies, undefined);
  assert.deepEqual(manifest.bin, { mediajobs: 'dist/cli.js' });
});
