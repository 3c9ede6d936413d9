#!/usr/bin/env node
// `npm run swift`: a private Swift (s3api) on loopback until Ctrl-C, for trying STORAGE_BACKEND=s3 by
// hand. Runs test/support/swift.ts through swc (the compiler the tests use), so there is one helper.
const { transformFileSync } = require('@swc/core');
const Module = require('node:module');
const { join } = require('node:path');

const file = join(__dirname, '..', 'test', 'support', 'swift.ts');
const { code } = transformFileSync(file, {
  jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
  module: { type: 'commonjs' },
});
const helper = new Module(file, module);
helper.filename = file;
helper.paths = Module._nodeModulePaths(join(__dirname, '..'));
helper._compile(code, file);
helper.exports
  .startSwift()
  .then((swift) => {
    const env = swift.env(process.env.S3_BUCKET || 'mediajobs');
    const lines = Object.entries(env).map(([name, value]) => `${name}=${value}`);
    process.stdout.write(
      `Swift (s3api) on ${swift.endpoint}. Settings:\n${lines.join('\n')}\nCtrl-C stops it and deletes its data.\n`,
    );
    const stop = () => swift.stop().then(() => process.exit(0));
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  })
  .catch((error) => {
    process.stderr.write(`Swift did not start: ${error.stack ?? error}\n`);
    process.exit(1);
  });
