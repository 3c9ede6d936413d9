// Jest runs TypeScript through swc (NestJS 12 is ESM-only; ts-jest cannot load it). Type-checking is
// `npm run typecheck`, part of `npm test`.
/**
 * Jest workers, each running test files one after another in a database and Redis prefix of its own
 * (test/support/test-env.ts). Two by default, sized to the two-core machines we run on: the suite mostly
 * waits on services and child processes, and two workers were seen green on an idle machine in two thirds
 * of the serial time (docs/development.md, "Parallel runs"). TEST_WORKERS=n for n, TEST_WORKERS=1 for one
 * process (scripts/test.js then passes --runInBand).
 */
function workers() {
  const asked = Number(process.env.TEST_WORKERS);
  return Number.isInteger(asked) && asked > 0 ? asked : 2;
}

/** @type {import('jest').Config} */
module.exports = {
  rootDir: '.',
  maxWorkers: workers(),
  testEnvironment: '<rootDir>/test/support/jest-environment.js',
  testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/test/**/*.e2e-spec.ts', '<rootDir>/test/**/*.spec.ts'],
  // The chaos suite is its own run: `npm run test:chaos` (jest.chaos.config.js).
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/chaos/'],
  modulePathIgnorePatterns: ['<rootDir>/sdk/', '<rootDir>/dist/', '<rootDir>/dashboard/'],
  moduleFileExtensions: ['ts', 'js', 'json'],
  transform: {
    '^.+\\.(t|j)s$': [
      '@swc/jest',
      {
        jsc: {
          parser: { syntax: 'typescript', decorators: true },
          transform: { legacyDecorator: true, decoratorMetadata: true },
          target: 'es2022',
          keepClassNames: true,
        },
        module: { type: 'commonjs' },
      },
    ],
  },
  transformIgnorePatterns: [
    '/node_modules/(?!(@nestjs|file-type|load-esm|@standard-schema|strtok3|token-types|@tokenizer|@borewit|uint8array-extras|content-disposition)/)',
  ],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  setupFiles: ['<rootDir>/test/support/setup-env.ts'],
  // Makes the Jest worker's own database on its first file (test/support/worker-database.ts); checks every
  // JSON response of the test APIs against the OpenAPI document (test/support/openapi-validation.ts).
  setupFilesAfterEnv: ['<rootDir>/test/support/worker-database.ts', '<rootDir>/test/support/openapi-report.ts'],
  testTimeout: 60000,
};
