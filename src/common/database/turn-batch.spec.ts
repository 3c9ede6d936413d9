import { TurnBatch } from './turn-batch';

describe('TurnBatch', () => {
  it('answers the loads of one turn with one call, in their order; the next turn is a new batch', async () => {
    const calls: number[][] = [];
    const batch = new TurnBatch<number, string>(async (keys) => {
      calls.push(keys);
      return keys.map((key) => `v${key}`);
    });
    expect(await Promise.all([batch.load(1), batch.load(2), batch.load(1)])).toEqual(['v1', 'v2', 'v1']);
    expect(await batch.load(3)).toBe('v3');
    expect(calls).toEqual([[1, 2, 1], [3]]);
  });

  it('a failed call fails every load of its batch, and only those', async () => {
    let fail = true;
    const batch = new TurnBatch<number, number>(async (keys) => {
      if (fail) throw new Error('database down');
      return keys;
    });
    const failed = [batch.load(1), batch.load(2)];
    await expect(Promise.all(failed.map((p) => p.catch((error: Error) => error.message)))).resolves.toEqual([
      'database down',
      'database down',
    ]);
    fail = false;
    await expect(batch.load(3)).resolves.toBe(3);
  });

  it('a call that answers the wrong number of values fails its loads instead of mixing answers up', async () => {
    const batch = new TurnBatch<number, number>(async () => [1]);
    await expect(Promise.all([batch.load(1), batch.load(2)])).rejects.toThrow('1 values for 2 keys');
  });

  it('with a concurrency, loads that arrive while that many batches run wait and go together in the next', async () => {
    const calls: number[][] = [];
    const ends: (() => void)[] = [];
    const batch = new TurnBatch<number, number>(async (keys) => {
      calls.push(keys);
      await new Promise<void>((end) => ends.push(end));
      return keys;
    }, 2);
    const turn = (): Promise<void> => new Promise((next) => setImmediate(next));
    const loads = [batch.load(1)];
    await turn();
    loads.push(batch.load(2));
    await turn();
    // Two batches run; these three wait, over several turns.
    loads.push(batch.load(3));
    await turn();
    loads.push(batch.load(4), batch.load(5));
    await turn();
    expect(calls).toEqual([[1], [2]]);
    ends.shift()!();
    await turn();
    await turn();
    expect(calls).toEqual([[1], [2], [3, 4, 5]]);
    for (const end of ends.splice(0)) end();
    expect(await Promise.all(loads)).toEqual([1, 2, 3, 4, 5]);
  });
});
