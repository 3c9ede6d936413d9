import { PeriodicTask } from './periodic';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('PeriodicTask', () => {
  it('runs one at a time: a tick that finds the previous run going is skipped', async () => {
    let running = 0;
    let most = 0;
    let runs = 0;
    const task = new PeriodicTask('slow', { error: () => undefined }, async () => {
      running++;
      runs++;
      most = Math.max(most, running);
      await sleep(60);
      running--;
    });
    task.start(10);
    await sleep(300);
    task.stop();
    await sleep(80);
    expect(most).toBe(1);
    expect(runs).toBeGreaterThanOrEqual(2);
  });

  it('says it is stopped once stop() is called, so a long run can end between batches', async () => {
    const task = new PeriodicTask('purge', { error: () => undefined }, () => Promise.resolve());
    expect(task.stopped).toBe(false);
    task.start(1000);
    task.stop();
    expect(task.stopped).toBe(true);
  });
});
