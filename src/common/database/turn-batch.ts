// Requests that arrive together, answered together. Under load the API's job reads come in bursts: one
// Redis reply chunk lets a dozen requests through their access check in the same event-loop turn,
// and each then sent its own query — a round trip, a socket write (~50 µs of the API's one thread on
// this VM) and a statement for PostgreSQL per read. A TurnBatch collects the loads of one turn and
// answers them with one call (the job reads; the submits' shared transactions, src/jobs/job-admission.ts,
// with a bound on how many run at once). DataLoader's scheduling idea without its cache: nothing is
// remembered between turns, so every read sees the latest committed state.

export class TurnBatch<K, V> {
  private waiting: { key: K; resolve: (value: V) => void; reject: (error: unknown) => void }[] = [];
  private running = 0;
  private scheduled = false;

  /**
   * `run` answers the keys of one batch, in their order (one value per key). With `concurrency`, at most
   * that many batches run at once: loads that arrive while they all run wait, and go together as the
   * next batch when one ends — under load the batches grow rather than multiply.
   */
  constructor(
    private readonly run: (keys: K[]) => Promise<V[]>,
    private readonly concurrency = Infinity,
  ) {}

  load(key: K): Promise<V> {
    return new Promise<V>((resolve, reject) => {
      this.waiting.push({ key, resolve, reject });
      this.schedule();
    });
  }

  /** The next batch after the turn's I/O callbacks (setImmediate), once fewer than `concurrency` run. */
  private schedule(): void {
    if (this.scheduled || !this.waiting.length || this.running >= this.concurrency) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    const batch = this.waiting;
    this.waiting = [];
    this.running++;
    try {
      const values = await this.run(batch.map((waiting) => waiting.key));
      if (values.length !== batch.length)
        throw new Error(`TurnBatch: ${values.length} values for ${batch.length} keys`);
      batch.forEach((waiting, n) => waiting.resolve(values[n]));
    } catch (error) {
      for (const waiting of batch) waiting.reject(error);
    } finally {
      this.running--;
      this.schedule();
    }
  }
}
