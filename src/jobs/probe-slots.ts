import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { ApiError } from '../common/errors';

/** How long a submit waits for a slot held by other accounts' probes before it is told to retry. */
export const PROBE_SLOT_WAIT_MS = 2000;

interface SharedRun {
  result: Promise<unknown>;
  callers: number;
  controller: AbortController;
}

interface Waiter {
  accountId: string;
  /** Hands the waiter its slot (already counted by `take`). */
  grant: () => void;
}

/**
 * The bound on submit-time ffprobe processes in one API instance (MAX_CONCURRENT_PROBES): each costs
 * tens of MB and may wait seconds on a slow source, so an unbounded number exhausts memory.
 * - An account runs at most its share of them at once (MAX_PROBES_PER_ACCOUNT): one tenant's slow
 *   sources then delay only that tenant, and never take the slots another account's submits need.
 * - A freed slot goes to the waiting account that runs the fewest probes (the earliest of those first).
 * - Submits of the same source from one account at the same time share one probe (a burst of one upload
 *   probes once); another account's submit of it probes on its own share, never waiting on this one.
 * - A probe held back by its own account's probes (its share is taken, or the instance would have a
 *   free slot without them) waits its turn within its request's probing time (requestProbeBudget): the
 *   account's own work delays its other sources, it does not refuse them.
 * - A probe held back by other accounts' probes (they fill the instance) waits PROBE_SLOT_WAIT_MS, then
 *   the submit gets a retryable 503 with Retry-After: a 503 means the instance itself is busy.
 * - A caller whose client went away, or whose request used up its probing time, stops waiting at once;
 *   a probe nobody waits for any more is aborted (which kills its ffprobe).
 */
@Injectable()
export class ProbeSlots {
  private running = 0;
  private readonly runningByAccount = new Map<string, number>();
  private readonly waiting: Waiter[] = [];
  private readonly shared = new Map<string, SharedRun>();

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  /** `work`'s result for `key` of `accountId`: joined when a run for it is under way, else started in a slot. */
  async run<T>(
    accountId: string,
    key: string,
    signal: AbortSignal | undefined,
    work: (signal: AbortSignal) => Promise<T>,
  ): Promise<T> {
    if (signal?.aborted) throw stopReason(signal);
    const sharedKey = `${accountId}\u0000${key}`;
    let run = this.shared.get(sharedKey);
    if (!run) {
      const controller = new AbortController();
      const result = this.inSlot(accountId, controller.signal, () => work(controller.signal)).finally(() => {
        if (this.shared.get(sharedKey) === run) this.shared.delete(sharedKey);
      });
      // Every caller awaits `result` below and gets its error; this only keeps a run whose callers all
      // left from being reported as an unhandled rejection (its error has no one left to tell).
      result.catch(() => undefined);
      run = { result, callers: 0, controller };
      this.shared.set(sharedKey, run);
    }
    const joined = run;
    joined.callers++;
    let onAbort: (() => void) | undefined;
    try {
      const left = new Promise<never>((_, reject) => {
        if (!signal) return;
        onAbort = () => reject(stopReason(signal));
        signal.addEventListener('abort', onAbort, { once: true });
      });
      return (await Promise.race([joined.result, left])) as T;
    } finally {
      if (onAbort) signal?.removeEventListener('abort', onAbort);
      if (--joined.callers === 0) joined.controller.abort();
    }
  }

  private async inSlot<T>(accountId: string, signal: AbortSignal, work: () => Promise<T>): Promise<T> {
    await this.acquire(accountId, signal);
    try {
      return await work();
    } finally {
      this.release(accountId);
    }
  }

  private acquire(accountId: string, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(clientGone());
    if (this.mayStart(accountId)) {
      this.take(accountId);
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const settle = (error: ApiError | null): void => {
        const at = this.waiting.indexOf(waiter);
        if (at >= 0) this.waiting.splice(at, 1);
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        if (error) reject(error);
        else resolve();
      };
      const waiter: Waiter = { accountId, grant: () => settle(null) };
      const onAbort = (): void => settle(clientGone());
      // Each PROBE_SLOT_WAIT_MS: refused when other accounts fill the instance, else waiting on.
      const check = (): void => {
        if (this.othersFillInstance(accountId)) settle(this.noSlot(accountId));
        else timer = setTimeout(check, PROBE_SLOT_WAIT_MS);
      };
      let timer = setTimeout(check, PROBE_SLOT_WAIT_MS);
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }

  private release(accountId: string): void {
    this.running--;
    const mine = (this.runningByAccount.get(accountId) ?? 1) - 1;
    if (mine > 0) this.runningByAccount.set(accountId, mine);
    else this.runningByAccount.delete(accountId);
    for (let next = this.nextWaiter(); next; next = this.nextWaiter()) {
      this.waiting.splice(this.waiting.indexOf(next), 1);
      this.take(next.accountId);
      next.grant();
    }
  }

  /** The waiter a free slot goes to: of the accounts within their share, the one running fewest, earliest first. */
  private nextWaiter(): Waiter | undefined {
    let best: Waiter | undefined;
    for (const waiter of this.waiting) {
      if (!this.mayStart(waiter.accountId)) continue;
      if (!best || this.runningOf(waiter.accountId) < this.runningOf(best.accountId)) best = waiter;
    }
    return best;
  }

  private mayStart(accountId: string): boolean {
    return (
      this.running < this.config.maxConcurrentProbes && this.runningOf(accountId) < this.config.maxProbesPerAccount
    );
  }

  /** Whether other accounts' probes alone take every slot of the instance (not this account's own). */
  private othersFillInstance(accountId: string): boolean {
    return this.running - this.runningOf(accountId) >= this.config.maxConcurrentProbes;
  }

  private take(accountId: string): void {
    this.running++;
    this.runningByAccount.set(accountId, this.runningOf(accountId) + 1);
  }

  private runningOf(accountId: string): number {
    return this.runningByAccount.get(accountId) ?? 0;
  }

  /** The refusal of a probe that found no slot in time because other accounts' probes fill the instance. */
  private noSlot(accountId: string): ApiError {
    return new ApiError('service_unavailable', {
      message: 'Too many sources are being inspected on this server right now. Retry in a moment.',
      retryAfterSeconds: 1,
      details: {
        account_probes_running: this.runningOf(accountId),
        max_probes_per_account: this.config.maxProbesPerAccount,
      },
    });
  }
}

/**
 * A request's bound on the time its sources take to inspect, all its inputs together
 * (PROBE_REQUEST_SECONDS): waits for a slot and probes alike. Past it, the probe under way is left (and
 * killed when nobody else waits for it) and the request gets a retryable 503 saying so. `client` is the
 * request's client-gone signal, which stops it too. Call `end` when the sources are checked.
 */
export function requestProbeBudget(
  client: (() => AbortSignal) | undefined,
  seconds: number,
): { signal: () => AbortSignal; end: () => void } {
  const deadline = Date.now() + seconds * 1000;
  let controller: AbortController | undefined;
  let timer: NodeJS.Timeout | undefined;
  let clientSignal: AbortSignal | undefined;
  const onClientGone = (): void => controller?.abort(clientGone());
  return {
    // Made when a probe first needs it: a request whose verdicts are all cached costs no timer.
    signal: () => {
      if (controller) return controller.signal;
      const made = new AbortController();
      controller = made;
      clientSignal = client?.();
      if (clientSignal?.aborted) made.abort(clientGone());
      clientSignal?.addEventListener('abort', onClientGone, { once: true });
      timer = setTimeout(
        () =>
          made.abort(
            new ApiError('service_unavailable', {
              message: `Inspecting this request's sources took longer than ${seconds} s, the most one request may take. Retry in a moment, or send fewer or faster sources per request.`,
              retryAfterSeconds: 1,
              details: { probe_seconds_limit: seconds },
            }),
          ),
        Math.max(0, deadline - Date.now()),
      );
      timer.unref();
      return made.signal;
    },
    end: () => {
      clearTimeout(timer);
      clientSignal?.removeEventListener('abort', onClientGone);
    },
  };
}

/** Why `signal` stopped a caller: its request's probing time ran out (the reason it carries), or its client left. */
export function stopReason(signal: AbortSignal): ApiError {
  return signal.reason instanceof ApiError ? signal.reason : clientGone();
}

/** The client closed the connection: nobody reads this answer, it only names the request in the log. */
export function clientGone(): ApiError {
  return new ApiError('service_unavailable', {
    message: 'The client closed the request before the source was checked.',
  });
}
