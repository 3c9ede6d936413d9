import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { ApiError } from '../common/errors';

/** How long a submit waits for a free probe slot before it is told to retry. */
export const PROBE_SLOT_WAIT_MS = 2000;

interface SharedRun {
  result: Promise<unknown>;
  callers: number;
  controller: AbortController;
}

/**
 * The bound on submit-time ffprobe processes in one API instance (MAX_CONCURRENT_PROBES): each costs
 * tens of MB and may wait seconds on a slow source, so an unbounded number exhausts memory.
 * - Submits of the same source at the same time share one probe (a burst of one upload probes once).
 * - A new probe waits at most PROBE_SLOT_WAIT_MS for a slot (in arrival order), then the submit gets a
 *   retryable 503 with Retry-After.
 * - A caller whose client went away stops waiting at once; a probe nobody waits for any more is
 *   aborted (which kills its ffprobe).
 */
@Injectable()
export class ProbeSlots {
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  private readonly shared = new Map<string, SharedRun>();

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  /** `work`'s result for `key`: joined when a run for it is under way, else started in a slot. */
  async run<T>(key: string, signal: AbortSignal | undefined, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    if (signal?.aborted) throw clientGone();
    let run = this.shared.get(key);
    if (!run) {
      const controller = new AbortController();
      const result = this.inSlot(controller.signal, () => work(controller.signal)).finally(() => {
        if (this.shared.get(key) === run) this.shared.delete(key);
      });
      // Every caller awaits `result` below and gets its error; this only keeps a run whose callers all
      // left from being reported as an unhandled rejection (its error has no one left to tell).
      result.catch(() => undefined);
      run = { result, callers: 0, controller };
      this.shared.set(key, run);
    }
    const joined = run;
    joined.callers++;
    let onAbort: (() => void) | undefined;
    try {
      const left = new Promise<never>((_, reject) => {
        onAbort = () => reject(clientGone());
        signal?.addEventListener('abort', onAbort, { once: true });
      });
      return (await Promise.race([joined.result, left])) as T;
    } finally {
      if (onAbort) signal?.removeEventListener('abort', onAbort);
      if (--joined.callers === 0) joined.controller.abort();
    }
  }

  private async inSlot<T>(signal: AbortSignal, work: () => Promise<T>): Promise<T> {
    await this.acquire(signal);
    try {
      return await work();
    } finally {
      this.release();
    }
  }

  private acquire(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(clientGone());
    if (this.running < this.config.maxConcurrentProbes) {
      this.running++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const settle = (error: ApiError | null): void => {
        const at = this.waiting.indexOf(grant);
        if (at >= 0) this.waiting.splice(at, 1);
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        if (error) reject(error);
        else resolve();
      };
      // The slot is handed over by release(): `running` already counts it.
      const grant = (): void => settle(null);
      const onAbort = (): void => settle(clientGone());
      const timer = setTimeout(
        () =>
          settle(
            new ApiError('service_unavailable', {
              message: 'Too many sources are being inspected on this server right now. Retry in a moment.',
              retryAfterSeconds: 1,
            }),
          ),
        PROBE_SLOT_WAIT_MS,
      );
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(grant);
    });
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running--;
  }
}

/** The client closed the connection: nobody reads this answer, it only names the request in the log. */
export function clientGone(): ApiError {
  return new ApiError('service_unavailable', {
    message: 'The client closed the request before the source was checked.',
  });
}
