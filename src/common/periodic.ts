// The one way a process runs something on a timer (heartbeat, reconciler, purges, the sweeper, the
// webhook pump), with one error policy: an outage (PostgreSQL or Redis unreachable) is expected and
// waits for the next tick without a word — it is reported where it is noticed (health, the queue's
// connection error); any other failure is logged as an error naming the task, and the task runs again
// at its next tick. A timer never keeps the process alive.
import type { Logger } from '@nestjs/common';
import { isUnavailableError } from './errors/classify';

export class PeriodicTask {
  private timer?: NodeJS.Timeout;

  constructor(
    /** Names the task in the log line of a failure. */
    readonly name: string,
    private readonly logger: Pick<Logger, 'error'>,
    private readonly task: () => Promise<unknown>,
  ) {}

  /** Runs the task every `ms` from now (the first run `ms` from now); a second start is a no-op. */
  start(ms: number): this {
    if (this.timer) return this;
    this.timer = setInterval(() => void this.runOnce(), ms);
    this.timer.unref();
    return this;
  }

  /** One run now, under the same error policy (a failure is logged, never thrown). */
  async runOnce(): Promise<void> {
    try {
      await this.task();
    } catch (error) {
      if (!isUnavailableError(error)) this.logger.error({ err: error, task: this.name }, `${this.name} failed`);
    }
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
