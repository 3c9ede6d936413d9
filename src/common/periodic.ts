// The one way a process runs something on a timer (heartbeat, reconciler, purges, the sweeper, the
// webhook pump), with one error policy: an outage (PostgreSQL or Redis unreachable) is expected and
// waits for the next tick without a word — it is reported where it is noticed (health, the queue's
// connection error); any other failure is logged as an error naming the task, and the task runs again
// at its next tick. A timer never keeps the process alive. One run at a time: a tick that finds the
// previous run still going (a purge of millions of rows, paced in batches) is skipped.
import type { Logger } from '@nestjs/common';
import { isUnavailableError } from './errors/classify';

export class PeriodicTask {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private halted = false;

  constructor(
    /** Names the task in the log line of a failure. */
    readonly name: string,
    private readonly logger: Pick<Logger, 'error'>,
    private readonly task: () => Promise<unknown>,
  ) {}

  /** Runs the task every `ms` from now (the first run `ms` from now); a second start is a no-op. */
  start(ms: number): this {
    if (this.timer) return this;
    this.halted = false;
    this.timer = setInterval(() => void this.runOnce(), ms);
    this.timer.unref();
    return this;
  }

  /** One run now (or the one already going), under the same error policy (a failure is logged, never thrown). */
  runOnce(): Promise<void> {
    this.running ??= (async () => {
      try {
        await this.task();
      } catch (error) {
        if (!isUnavailableError(error)) this.logger.error({ err: error, task: this.name }, `${this.name} failed`);
      } finally {
        this.running = undefined;
      }
    })();
    return this.running;
  }

  /** Whether stop() was called: a long run checks it between batches and ends early. */
  get stopped(): boolean {
    return this.halted;
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.halted = true;
  }
}
