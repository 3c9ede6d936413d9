// The chaos / reliability suite (test/chaos/): killed workers, restarted Redis and PostgreSQL,
// submit storms, several API instances, fuzzing. A separate Jest run (`npm run test:chaos`, its JSON
// report in .jest-chaos-results.json), not part of `npm test`; same transform, global set-up
// (own database and Redis prefix per run) and environment as the main suite.
//
// Its files run one at a time (maxWorkers below). They share no fault — each kills only what it started: its
// own worker processes by process group, its own `redis-server`, `pg_createcluster` cluster (named after the
// Jest worker's pid), Swift, TCP proxies and webhook receiver, each on a free loopback port — but they
// measure what only an otherwise quiet machine gives: answers within 5 s while a dependency restarts, jobs
// drained after outages, 1,000 connections at once. In two workers the neighbour's load broke `outages` in CI
// (stop 46), for about 1.4 min gained on an idle machine (8.6 against 10 min). The closing money audit reads
// every Jest worker's database (test/chaos/global-teardown.ts).
const base = require('./jest.config.js');

/** @type {import('jest').Config} */
module.exports = {
  ...base,
  testMatch: ['<rootDir>/test/chaos/**/*.e2e-spec.ts'],
  testPathIgnorePatterns: ['/node_modules/'],
  testTimeout: 180000,
  maxWorkers: 1,
  // Responses are checked against the OpenAPI document in report mode here (test/chaos/openapi-report-mode.ts).
  setupFiles: [...base.setupFiles, '<rootDir>/test/chaos/openapi-report-mode.ts'],
  // The operators' money audit over the run's database, before it is dropped (test/chaos/global-teardown.ts).
  globalTeardown: '<rootDir>/test/chaos/global-teardown.ts',
};
