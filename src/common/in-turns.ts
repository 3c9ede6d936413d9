// Work over many items with a bound on how much of it runs at once.

/**
 * Runs `task` for each item, at most `limit` at a time, in order of the items. After a failure no
 * further item starts, and the first failure is thrown only once every running task has settled —
 * so a caller's clean-up never races a task still writing.
 */
export async function inTurns<T>(
  items: readonly T[],
  limit: number,
  task: (item: T, index: number) => Promise<unknown>,
): Promise<void> {
  if (!(Number.isInteger(limit) && limit >= 1)) throw new RangeError(`limit must be a positive integer, got ${limit}`);
  let next = 0;
  const failures: unknown[] = [];
  const lane = async (): Promise<void> => {
    while (failures.length === 0 && next < items.length) {
      const index = next++;
      try {
        await task(items[index], index);
      } catch (error) {
        failures.push(error);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  if (failures.length > 0) throw failures[0];
}
