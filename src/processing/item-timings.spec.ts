import { itemStageSeconds } from '../metrics/job-metrics';
import { ItemClock } from './item-timings';

describe('ItemClock', () => {
  it('adds each stage (also when it throws), keeps the order of the stages and counts the rest as other', async () => {
    const clock = new ItemClock();
    await clock.time('probe', () => new Promise((resolve) => setTimeout(resolve, 20)));
    await expect(clock.time('store', () => Promise.reject(new Error('down')))).rejects.toThrow('down');
    clock.add('encode', 5);
    clock.add('encode', 7);
    await new Promise((resolve) => setTimeout(resolve, 10));
    const report = clock.report();
    expect(Object.keys(report.stages_ms)).toEqual(['probe', 'encode', 'store']);
    expect(report.stages_ms.encode).toBe(12);
    expect(report.stages_ms.probe).toBeGreaterThanOrEqual(15);
    expect(report.total_ms).toBeGreaterThanOrEqual(report.stages_ms.probe! + 8);
    // encode was added by hand (not part of the elapsed time): other is never negative.
    expect(report.other_ms).toBeGreaterThanOrEqual(0);
  });

  it('observes each stage it saw in mediajobs_item_stage_seconds', async () => {
    const count = async (stage: string) =>
      (await itemStageSeconds.get()).values.find(
        (entry) => entry.metricName?.endsWith('_count') && entry.labels.stage === stage && entry.labels.api === 'audio',
      )?.value ?? 0;
    const before = await count('end');
    const clock = new ItemClock();
    clock.add('end', 3);
    clock.observe('audio');
    expect(await count('end')).toBe(before + 1);
    expect(await count('cleanup')).toBe(0);
  });
});
