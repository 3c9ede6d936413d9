import {
  attemptOutcome,
  creditsMoved,
  heightClass,
  jobClaimed,
  jobEnded,
  jobsFinished,
  credits,
  itemsFinished,
  queueWait,
} from './job-metrics';

async function value(
  metric: { get(): Promise<{ values: { labels: object; value: number; metricName?: string }[] }> },
  labels: object,
  suffix = '',
) {
  const { values } = await metric.get();
  const found = values.find(
    (entry) =>
      (!suffix || entry.metricName?.endsWith(suffix)) &&
      Object.entries(labels).every(([name, wanted]) => (entry.labels as Record<string, unknown>)[name] === wanted),
  );
  return found?.value ?? 0;
}

describe('job metrics', () => {
  it('a job end counts its status and code (none on success), and each item by outcome', async () => {
    const before = await value(jobsFinished, { api: 'audio', status: 'failed', code: 'invalid_url' });
    jobEnded({
      api: 'audio',
      status: 'failed',
      error: { code: 'invalid_url' },
      startedAt: new Date(Date.now() - 2000),
      items: [{ status: 'failed' }, { status: 'failed' }],
    });
    jobEnded({
      api: 'audio',
      status: 'succeeded',
      error: null,
      startedAt: new Date(),
      items: [{ status: 'succeeded' }],
    });
    expect(await value(jobsFinished, { api: 'audio', status: 'failed', code: 'invalid_url' })).toBe(before + 1);
    expect(await value(jobsFinished, { api: 'audio', status: 'succeeded', code: 'none' })).toBeGreaterThanOrEqual(1);
    expect(await value(itemsFinished, { api: 'audio', outcome: 'failed' })).toBeGreaterThanOrEqual(2);
  });

  it('queue wait counts a first take only', async () => {
    const count = () => value(queueWait, { api: 'sdr2hdr', plan: 'pro' }, '_count');
    const before = await count();
    const created_at = new Date(Date.now() - 5000);
    jobClaimed({ api: 'sdr2hdr', plan: 'pro', attempts: 1, created_at, started_at: new Date() });
    jobClaimed({ api: 'sdr2hdr', plan: 'pro', attempts: 2, created_at, started_at: new Date() });
    expect(await count()).toBe(before + 1);
  });

  it('credits count by movement; nothing for zero', async () => {
    const before = await value(credits, { movement: 'released' });
    creditsMoved('released', 7);
    creditsMoved('released', 0);
    expect(await value(credits, { movement: 'released' })).toBe(before + 7);
  });

  it.each([
    [200, null, '2xx'],
    [204, null, '2xx'],
    [302, 'The endpoint answered a redirect (HTTP 302); redirects are not followed.', '3xx'],
    [410, 'The endpoint answered HTTP 410 Gone; it is now disabled.', '4xx'],
    [503, 'The endpoint answered HTTP 503.', '5xx'],
    [null, "The URL's server did not answer within 10000 ms.", 'timeout'],
    [null, 'The URL is unreachable: the connection failed (ECONNREFUSED).', 'refused'],
    [null, 'The URL points to a private, loopback or link-local address, which is not allowed.', 'refused'],
    [null, "The connection to the URL's server failed (ECONNRESET).", 'error'],
  ] as const)('attempt %s / %s → %s', (status, error, outcome) => {
    expect(attemptOutcome(status, error)).toBe(outcome);
  });

  it('height classes keep the label set small', () => {
    expect([null, 0, 90, 480, 481, 720, 1080, 1440, 2160, 4320].map(heightClass)).toEqual([
      'none',
      'none',
      '480',
      '480',
      '720',
      '720',
      '1080',
      '1440',
      '2160',
      '2160',
    ]);
  });
});
