import type { JobLifecycle } from '../../../jobs/job-lifecycle';
import type { JobItemRow, JobRow } from '../../../jobs/job.types';
import {
  FakeRunner,
  FakeWorkDirs,
  itemRow,
  jobRow,
  MemoryStorage,
  silenceNestLogs,
  specConfig,
} from '../../../../test/support/processing-fakes';
import type { ItemEnding } from '../../item-ending';
import type { ProgressWriter } from '../../progress-writer';
import type { JoinRequest, RunItemResult } from '../../media-runner';
import type { SegmentFiles } from '../../segment-files';
import type { SegmentRow, SegmentsRepository } from '../../segments.repository';
import { JoinItem } from './join-item.usecase';

function segmentRow(segment: number, overrides: Partial<SegmentRow> = {}): Partial<SegmentRow> {
  return {
    job_id: 'job_spec',
    item_index: 0,
    segment,
    status: 'succeeded',
    encoded_key: `segments/job_spec/0/enc-${segment}.mp4`,
    source_key: `segments/job_spec/0/src-${segment}.mp4`,
    audio_key: 'segments/job_spec/0/audio.mov',
    audio_codec: 'aac',
    ...overrides,
  };
}

function setup(rows = [segmentRow(0), segmentRow(1), segmentRow(2)]) {
  const runner = new FakeRunner();
  const storage = new MemoryStorage();
  for (const row of rows) if (row.encoded_key) storage.objects.set(row.encoded_key, 'stored');
  for (const row of rows) if (row.source_key) storage.objects.set(row.source_key, 'stored');
  storage.objects.set('segments/job_spec/0/audio.mov', 'stored');
  const workDirs = new FakeWorkDirs();
  const removed: string[] = [];
  const ended: { item: JobItemRow; result: RunItemResult; sourcePaths: string[] }[] = [];
  const useCase = new JoinItem(
    { claim: async () => ({ job: jobRow(), items: [itemRow()] }) } as unknown as JobLifecycle,
    { list: async () => rows } as unknown as SegmentsRepository,
    {
      remove: async (jobId: string, index: number) => void removed.push(`${jobId}/${index}`),
    } as unknown as SegmentFiles,
    {
      end: async (_job: JobRow, item: JobItemRow, result: RunItemResult, source: { sourcePaths: string[] }) => {
        ended.push({ item, result, sourcePaths: source.sourcePaths });
        return { outcome: 'succeeded', outputBytes: 1 };
      },
    } as unknown as ItemEnding,
    { phase: () => undefined } as unknown as ProgressWriter,
    workDirs.asWorkDirs(),
    runner,
    storage.asStorage(),
    specConfig(),
  );
  return { useCase, runner, workDirs, removed, ended };
}

const command = (controller = new AbortController()) => ({ jobId: 'job_spec', index: 0, signal: controller.signal });

describe('JoinItem', () => {
  silenceNestLogs();

  it('joins the encoded parts in order with the audio, ends the item with the output, removes the segments', async () => {
    const { useCase, runner, workDirs, removed, ended } = setup();
    await useCase.execute(command());
    const [request] = runner.called('join') as JoinRequest[];
    const dir = '/work/job_spec-0-join';
    expect(request).toMatchObject({
      parts: [`${dir}/enc-0.mp4`, `${dir}/enc-1.mp4`, `${dir}/enc-2.mp4`],
      audio: { path: `${dir}/audio.mov`, codec: 'aac' },
      outputPath: `${dir}/out-0`,
    });
    expect(ended.map((entry) => entry.result)).toEqual([
      expect.objectContaining({ ok: true, path: `${dir}/out-0.mp4` }),
    ]);
    // The output's checks compare it with the source's parts, in order.
    expect(ended[0].sourcePaths).toEqual([`${dir}/src-0.mp4`, `${dir}/src-1.mp4`, `${dir}/src-2.mp4`]);
    expect(removed).toEqual(['job_spec/0']);
    expect(workDirs.removed).toEqual(workDirs.created);
  });

  it('a join that fails ends the item failed with its code', async () => {
    const { useCase, runner, ended } = setup();
    runner.joinResult = { ok: false, code: 'processing_failed' };
    await useCase.execute(command());
    expect(ended.map((entry) => entry.result)).toEqual([{ ok: false, code: 'processing_failed' }]);
  });

  it('an encoded part that is gone is an error of the unit (tried again), and ends nothing', async () => {
    const { useCase, ended, workDirs } = setup([segmentRow(0), segmentRow(1, { encoded_key: null })]);
    await expect(useCase.execute(command())).rejects.toThrow('its encoded part is gone');
    expect(ended).toEqual([]);
    expect(workDirs.removed).toEqual(workDirs.created);
  });

  it('cancelled during the join: nothing is ended', async () => {
    const controller = new AbortController();
    const { useCase, runner, ended } = setup();
    controller.abort();
    await useCase.execute(command(controller));
    expect(runner.called('join')).toHaveLength(1);
    expect(ended).toEqual([]);
  });
});
