// Series read at scrape time in the API process (queue depth per region, live workers, open credit
// holds, webhook backlog): the modules that own the data register a reader here (jobs, webhooks),
// and one scrape runs each reader once, however many gauges it fills.
import { Counter, Gauge } from 'prom-client';
import { metricsRegistry } from './registry';

export interface QueueSnapshot {
  region: string;
  waiting: number;
  active: number;
  delayed: number;
  failed: number;
  /** Age of the oldest job still waiting, 0 when none waits. */
  oldestWaitingSeconds: number;
  /** Workers of the region with a heartbeat in the region-health window. */
  workers: number;
}

export interface SystemSnapshot {
  queues?: QueueSnapshot[];
  /** Items waiting for a worker, by region and plan (the fair share's queue, from PostgreSQL). */
  waitingItems?: { region: string; plan: string; items: number }[];
  holds?: { open: number; oldestSeconds: number };
  webhooks?: { pending: number; endpointsDisabled: number };
}

export type SnapshotReader = () => Promise<SystemSnapshot>;

const readers = new Map<string, SnapshotReader>();
/** One scrape's reads, shared by every gauge's collect() of that scrape. */
let current: { at: number; snapshot: Promise<SystemSnapshot> } | undefined;
const SHARE_MS = 1000;

/** A module's reader (replaced when registered again under the same name, e.g. a second app in tests). */
export function registerSnapshotReader(name: string, reader: SnapshotReader): void {
  defineGauges();
  readers.set(name, reader);
  current = undefined;
}

export function unregisterSnapshotReader(name: string, reader: SnapshotReader): void {
  if (readers.get(name) === reader) readers.delete(name);
  current = undefined;
}

const readErrors = new Counter({
  name: 'mediajobs_metrics_read_errors_total',
  help: 'Scrape-time reads that failed (Redis or PostgreSQL unreachable), by source; their gauges keep the last value',
  labelNames: ['source'] as const,
  registers: [metricsRegistry],
});

async function readAll(): Promise<SystemSnapshot> {
  const parts = await Promise.all(
    [...readers].map(async ([name, reader]) => {
      try {
        return await reader();
      } catch {
        readErrors.inc({ source: name });
        return {};
      }
    }),
  );
  return Object.assign({}, ...parts) as SystemSnapshot;
}

function snapshot(): Promise<SystemSnapshot> {
  if (!current || Date.now() - current.at > SHARE_MS) current = { at: Date.now(), snapshot: readAll() };
  return current.snapshot;
}

/** A gauge filled from the snapshot at scrape time. */
function scraped<L extends string>(
  name: string,
  help: string,
  labelNames: readonly L[],
  fill: (gauge: Gauge<L>, snapshot: SystemSnapshot) => void,
): Gauge<L> {
  return new Gauge<L>({
    name,
    help,
    labelNames,
    registers: [metricsRegistry],
    async collect() {
      fill(this, await snapshot());
    },
  });
}

const QUEUE_STATES = ['waiting', 'active', 'delayed', 'failed'] as const;
let defined = false;

/**
 * Defined with the first reader, so only a process that reads them (the API) exports these series: a
 * worker showing `mediajobs_holds_open 0` would be a wrong answer, not a missing one.
 */
function defineGauges(): void {
  if (defined) return;
  defined = true;
  scraped(
    'mediajobs_queue_jobs',
    'Media queue units (one per job item) in each region queue, by BullMQ state',
    ['region', 'state'],
    (gauge, s) => {
      if (!s.queues) return;
      gauge.reset();
      for (const queue of s.queues)
        for (const state of QUEUE_STATES) gauge.set({ region: queue.region, state }, queue[state]);
    },
  );

  scraped(
    'mediajobs_queue_waiting_items',
    "Job items waiting for a worker, by region and the account's plan (never by account: bounded labels)",
    ['region', 'plan'],
    (gauge, s) => {
      if (!s.waitingItems) return;
      gauge.reset();
      for (const { region, plan, items } of s.waitingItems) gauge.set({ region, plan }, items);
    },
  );

  scraped(
    'mediajobs_queue_oldest_waiting_seconds',
    "Age of the oldest media queue unit waiting in the region's queue (0 when none waits)",
    ['region'],
    (gauge, s) => {
      if (!s.queues) return;
      gauge.reset();
      for (const queue of s.queues) gauge.set({ region: queue.region }, queue.oldestWaitingSeconds);
    },
  );

  scraped(
    'mediajobs_region_workers',
    'Workers of the region whose heartbeat is fresh (0: the region answers region_unavailable)',
    ['region'],
    (gauge, s) => {
      if (!s.queues) return;
      gauge.reset();
      for (const queue of s.queues) gauge.set({ region: queue.region }, queue.workers);
    },
  );

  scraped('mediajobs_holds_open', 'Credit holds not yet settled or released (open jobs)', [], (gauge, s) => {
    if (s.holds) gauge.set(s.holds.open);
  });

  scraped(
    'mediajobs_holds_oldest_age_seconds',
    'Age of the oldest open credit hold (0 when none is open); beyond the job time limit it is a leak',
    [],
    (gauge, s) => {
      if (s.holds) gauge.set(s.holds.oldestSeconds);
    },
  );

  scraped('mediajobs_webhook_deliveries_pending', 'Webhook deliveries waiting for a (re)try', [], (gauge, s) => {
    if (s.webhooks) gauge.set(s.webhooks.pending);
  });

  scraped(
    'mediajobs_webhook_endpoints_disabled',
    'Webhook endpoints disabled (HTTP 410, or by their owner)',
    [],
    (gauge, s) => {
      if (s.webhooks) gauge.set(s.webhooks.endpointsDisabled);
    },
  );
}
