// Preloaded into a measured server (`node -r dist-bench/bench/lib/cpu-profile.js …`; bench/reads.ts
// does it when BENCH_CPU_PROFILE_DIR is set) to profile it under load: `--cpu-prof` writes nothing
// when the process ends on a signal, as Nest's shutdown hooks make it. Profiling starts
// BENCH_CPU_PROFILE_DELAY_MS after start (default 8 s: after start-up and the bench's own set-up);
// the profile is written to BENCH_CPU_PROFILE on SIGTERM. Read it with Chrome's DevTools or
// `node dist-bench/bench/lib/cpu-profile-summary.js <file>`.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

const target = process.env.BENCH_CPU_PROFILE;
if (target) {
  const session = new Session();
  session.connect();
  let started = false;
  setTimeout(
    () => {
      session.post('Profiler.enable', () => session.post('Profiler.start', () => (started = true)));
    },
    Number(process.env.BENCH_CPU_PROFILE_DELAY_MS ?? 8000),
  ).unref();
  // Registered before Nest's own listener, and the main thread's session answers synchronously.
  process.prependListener('SIGTERM', () => {
    if (!started) return;
    session.post('Profiler.stop', (error, result) => {
      if (!error) writeFileSync(target, JSON.stringify(result.profile));
    });
  });
}
