#!/usr/bin/env node
// `npm run swift`: a private Swift (s3api) on loopback until Ctrl-C, for trying STORAGE_BACKEND=s3 by
// hand. Runs test/support/swift.ts through swc (the compiler the tests use), so there is one helper: every
// .ts file it requires (./ports, …) is compiled the same way as Node loads it.
const { transformFileSync } = require('@swc/core');
const { join } = require('node:path');

require.extensions['.ts'] = (module, filename) => {
  const { code } = transformFileSync(filename, {
    jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
    module: { type: 'commonjs' },
  });
  module._compile(code, filename);
};

require(join(__dirname, '..', 'test', 'support', 'swift.ts'))
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
