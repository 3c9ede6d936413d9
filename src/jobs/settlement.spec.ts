import { planCancel, planSettlement } from './settlement';

const DOCS = 'https://docs.example/docs';
const job = { api: 'sdr2hdr' as const, requestId: 'req_1' };
const items = [
  { index: 0, estimatedCredits: 20 },
  { index: 1, estimatedCredits: 10 },
];

describe('planSettlement', () => {
  it('charges actual usage, capped at the estimate, when every item succeeds', () => {
    const plan = planSettlement(
      job,
      items,
      [
        { index: 0, ok: true, processedSeconds: 9.2, outputPixels: 1920 * 1080 },
        { index: 1, ok: true, processedSeconds: 30, outputPixels: 1920 * 1080 },
      ],
      DOCS,
    );
    expect(plan.status).toBe('succeeded');
    expect(plan.items.map((item) => item.chargedCredits)).toEqual([20, 10]);
    expect(plan.chargedCredits).toBe(30);
    expect(plan.error).toBeNull();
    expect(plan.event).toBe('job.succeeded');
  });

  it('charges less than the hold when less was processed', () => {
    const plan = planSettlement(
      job,
      [items[0]],
      [{ index: 0, ok: true, processedSeconds: 4, outputPixels: 1280 * 720 }],
      DOCS,
    );
    expect(plan.chargedCredits).toBe(4);
  });

  it('charges a package per rung as made, never above the hold', () => {
    const rungs = [
      { width: 1920, height: 1080 },
      { width: 1280, height: 720 },
      { width: 1920, height: 1080 },
    ];
    const charged = (estimatedCredits: number, processedSeconds: number) =>
      planSettlement(
        job,
        [{ index: 0, estimatedCredits }],
        [{ index: 0, ok: true, processedSeconds, outputPixels: 1920 * 1080, rungs }],
        DOCS,
      ).chargedCredits;
    expect(charged(60, 10)).toBe(10 * (2 + 1 + 2));
    expect(charged(40, 10)).toBe(40);
    expect(charged(60, 4.5)).toBe(5 * (2 + 1 + 2));
  });

  it('fails the job with the first cause and charges nothing when every item fails', () => {
    const plan = planSettlement(
      job,
      items,
      [
        { index: 0, ok: false, code: 'drm_protected' },
        { index: 1, ok: false, code: 'invalid_media' },
      ],
      DOCS,
    );
    expect(plan).toMatchObject({ status: 'failed', chargedCredits: 0, event: 'job.failed' });
    expect(plan.error).toMatchObject({
      code: 'drm_protected',
      type: 'processing_error',
      retryable: false,
      request_id: 'req_1',
    });
    expect(plan.error!.doc_url).toBe(`${DOCS}/errors.html#drm_protected`);
  });

  it('settles a partial failure pro rata with the per-item breakdown in details', () => {
    const plan = planSettlement(
      job,
      items,
      [
        { index: 0, ok: true, processedSeconds: 10, outputPixels: 1920 * 1080 },
        { index: 1, ok: false, code: 'timeout' },
      ],
      DOCS,
    );
    expect(plan.status).toBe('partially_succeeded');
    expect(plan.chargedCredits).toBe(20);
    expect(plan.error).toMatchObject({ code: 'timeout', retryable: true, param: 'inputs[1]' });
    expect(plan.error!.details).toEqual({
      items: [
        { index: 0, status: 'succeeded', estimated_credits: 20, charged_credits: 20, error_code: null },
        { index: 1, status: 'failed', estimated_credits: 10, charged_credits: 0, error_code: 'timeout' },
      ],
      succeeded_items: 1,
      failed_items: 1,
      estimated_credits: 30,
      charged_credits: 20,
    });
  });
});

describe('planCancel', () => {
  it('charges the items delivered before the cancel, and nothing for the open ones it cancels', () => {
    const items = [
      { status: 'succeeded' as const, chargedCredits: 12, processedSeconds: 6 },
      { status: 'cancelled' as const, chargedCredits: 0, processedSeconds: 0 },
      { status: 'failed' as const, chargedCredits: 0, processedSeconds: 2 },
    ];
    expect(planCancel(items)).toEqual({ status: 'cancelled', chargedCredits: 12, processedSeconds: 6 });
    expect(planCancel(items.slice(1))).toEqual({ status: 'cancelled', chargedCredits: 0, processedSeconds: 0 });
  });
});
