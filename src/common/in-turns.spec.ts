import { inTurns } from './in-turns';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('inTurns', () => {
  it('runs every item, never more than `limit` at once, starting them in order', async () => {
    let running = 0;
    let most = 0;
    const started: number[] = [];
    await inTurns([...Array(10).keys()], 3, async (item) => {
      started.push(item);
      running++;
      most = Math.max(most, running);
      for (let n = 0; n < 1 + (item % 4); n++) await tick();
      running--;
    });
    expect(started).toEqual([...Array(10).keys()]);
    expect(most).toBe(3);
  });

  it('after a failure starts nothing more, waits for the running tasks, then throws the first failure', async () => {
    const settled: number[] = [];
    const started: number[] = [];
    const run = inTurns([0, 1, 2, 3, 4, 5], 2, async (item) => {
      started.push(item);
      if (item === 1) throw new Error('store down');
      for (let n = 0; n < 5; n++) await tick();
      settled.push(item);
    });
    await expect(run).rejects.toThrow('store down');
    // 0 was running when 1 failed: it finished before the failure was thrown, and nothing started after it.
    expect(started).toEqual([0, 1]);
    expect(settled).toEqual([0]);
  });

  it('no items: nothing runs; a limit below one is refused', async () => {
    await expect(inTurns([], 4, async () => undefined)).resolves.toBeUndefined();
    await expect(inTurns([1], 0, async () => undefined)).rejects.toThrow(RangeError);
  });
});
