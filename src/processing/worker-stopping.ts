/**
 * The worker is stopping (SIGTERM) and hands a unit back rather than finish it: work that may hold it
 * up to the job's time limit without running a media tool (a source download) is stopped, and this,
 * thrown out of the unit, sends the unit back to the queue for another worker (MediaWorker), not counted
 * against it. The item stays open; the next worker takes it again.
 */
export class WorkerStopping extends Error {
  constructor() {
    super('the worker is stopping: the unit goes back to the queue');
    this.name = 'WorkerStopping';
  }
}
