import { inBatches } from './upkeep-batches';

describe('inBatches', () => {
  it('runs batches until one comes back short, pausing after each at least as long as it took', async () => {
    let left = 25;
    const starts: number[] = [];
    const run = await inBatches({ size: 10, pauseMs: 0 }, async (size) => {
      starts.push(performance.now());
      await new Promise((resolve) => setTimeout(resolve, 30));
      const done = Math.min(size, left);
      left -= done;
      return done;
    });
    expect(run).toEqual({ batches: 3, done: 25 });
    // A 30 ms batch is followed by a pause of ≥ 30 ms: the next starts ≥ 60 ms after it (timer slack aside).
    for (let i = 1; i < starts.length; i++) expect(starts[i] - starts[i - 1]).toBeGreaterThanOrEqual(58);
  });

  it('pauses at least pauseMs after a quick batch, and a full last batch is followed by an empty one', async () => {
    let left = 20;
    const starts: number[] = [];
    const run = await inBatches({ size: 10, pauseMs: 50 }, async (size) => {
      starts.push(performance.now());
      const done = Math.min(size, left);
      left -= done;
      return done;
    });
    expect(run).toEqual({ batches: 3, done: 20 });
    for (let i = 1; i < starts.length; i++) expect(starts[i] - starts[i - 1]).toBeGreaterThanOrEqual(48);
  });

  it('stops between batches once stopped says so, leaving the rest', async () => {
    let batches = 0;
    const run = await inBatches({ size: 10, pauseMs: 0, stopped: () => batches >= 2 }, async (size) => {
      batches++;
      return size;
    });
    expect(run).toEqual({ batches: 2, done: 20 });
  });
});
