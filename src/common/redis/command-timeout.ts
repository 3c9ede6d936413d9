import { Command } from 'ioredis';

let installed = false;

/** A timer this much later than due means the process itself was stalled, not Redis. */
const STALL_FRACTION = 0.1;

/**
 * ioredis's `commandTimeout`, counting only time this process could have read the reply.
 *
 * ioredis fails a command from a plain timer. When the process itself stalls past the timeout (a long
 * garbage collection, a CPU taken by other work, a long synchronous computation), the timer is already
 * due when the loop comes back, and Node runs it before it reads the reply that arrived meanwhile — or
 * before the reply could arrive at all, when the stall fell between arming the timer and writing the
 * command (a pipeline writes after arming every command of its batch). A command Redis answered in a
 * millisecond then failed "Command timed out", and the API answered a healthy request 503
 * service_unavailable (test/foundation/event-loop-stall.e2e-spec.ts).
 *
 * Here a timer that fires late by more than a tenth of the timeout — the process was not running — gives
 * the command the whole timeout again; a timer on time decides after the next I/O poll (setImmediate), so
 * a reply already on the socket is read first. A Redis that stops answering while the process runs is
 * still failed one loop turn after the timeout (test/foundation/outage.e2e-spec.ts "stops answering").
 *
 * It replaces Command.prototype.setTimeout (ioredis 5: the one place `commandTimeout` is applied, for
 * single nodes, sentinel masters and cluster nodes alike), keeping its contract: one timer per command,
 * held in the field ioredis clears when the command settles.
 */
export function timeoutAfterPendingReplies(): void {
  if (installed) return;
  installed = true;
  function setTimeout(this: TimedCommand, ms: number): void {
    if (this._commandTimeoutTimer) return;
    const arm = () => {
      const due = performance.now() + ms;
      this._commandTimeoutTimer = globalThis.setTimeout(() => {
        if (performance.now() - due > ms * STALL_FRACTION) return arm();
        setImmediate(() => {
          if (!this.isResolved) this.reject(new Error('Command timed out'));
        });
      }, ms);
    };
    arm();
  }
  Command.prototype.setTimeout = setTimeout as unknown as Command['setTimeout'];
}

/** What of ioredis's Command this uses; the timer field is the one its `_clearTimers` clears when the command settles. */
interface TimedCommand {
  _commandTimeoutTimer?: ReturnType<typeof globalThis.setTimeout>;
  isResolved: boolean;
  reject(error: Error): void;
}
