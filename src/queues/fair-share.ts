// A fair share of a region's workers between accounts, on open-source BullMQ (its groups are a paid
// add-on): weighted fair queueing by priorities. Each item or segment unit gets, at enqueue, its
// account's virtual finish time as its BullMQ priority; BullMQ serves the lowest priority first
// (ties in the order added), so with N accounts waiting their units come out interleaved, each
// account getting about its weight's share of the workers however long another's backlog is.
//
// The clock: one script (atomic, one round trip per add) reads the region's virtual time — the
// priority of the unit that waits at the head of the queue, never going back — starts the account's
// units at the later of that (less one unit, so that its first unit goes just before the head) and the
// account's own last finish time, and advances the account's finish time by COST / weight per unit.
// An account that was idle gets the next free slot but no credit saved up while idle; a backlog's
// later units sit far behind. When nothing waits with a priority
// the clock and finish times start again from 0, which keeps priorities inside BullMQ's range
// (2^21 − 1; a busy period longer than that in virtual time queues the rest in arrival order).
//
// A job's own unit (process-job) is not weighed: it only fans the job out into items, so it waits
// in the plain list (priority 0), which BullMQ serves before any prioritized unit. A unit without an
// owner in its data (queued before this existed) counts as an account of its own, weight 1.
import type { AppConfig } from '../common/config/config';
import type { RedisClient } from '../common/redis/redis.module';
import { PROCESS_JOB, queueName, type MediaJobData } from './catalogue';
import type { QueueUnit, UnitSink } from './driver';
import { fairShareKeys } from './keys';

/** A job's fan-out unit: served at once, before any item (BullMQ's plain wait list). */
export const FAN_OUT_PRIORITY = 0;

/**
 * Each plan's share of a contended region: an enterprise account's units get 4 turns for a free
 * account's 1. Plans not listed (an operator's own) weigh 1. Published in docs/api-guide.md.
 */
export const PLAN_WEIGHTS: Readonly<Record<string, number>> = { free: 1, starter: 1, pro: 2, enterprise: 4 };

/** Virtual time one unit costs an account of weight 1 (an integer for every weight above). */
const COST = 4;
/** BullMQ's highest priority. */
export const MAX_PRIORITY = 2 ** 21 - 1;

export function planWeight(plan: string | undefined): number {
  return (plan && PLAN_WEIGHTS[plan]) || 1;
}

const ADVANCE = `
local clock = tonumber(redis.call('GET', KEYS[1]) or '0')
local head = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
if #head == 0 then
  clock = 0
  redis.call('DEL', KEYS[2])
else
  local headPriority = math.floor(tonumber(head[2]) / 4294967296)
  if headPriority > clock then clock = headPriority end
end
local finish = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '0')
-- An account with nothing waiting (its finish time is behind the head) starts so that its first unit
-- goes just before the head: the next free slot is its turn, as in round-robin.
local start = math.max(clock - tonumber(ARGV[2]) - 1, finish, 0)
redis.call('HSET', KEYS[2], ARGV[1], start + tonumber(ARGV[2]) * tonumber(ARGV[3]))
redis.call('SET', KEYS[1], clock)
return start
`;

type AdvanceCommand = (
  clockKey: string,
  finishKey: string,
  prioritizedKey: string,
  account: string,
  cost: number,
  count: number,
) => Promise<number>;

/** Who a media unit's work belongs to, for its share. */
export function unitOwner(data: MediaJobData): { account: string; plan?: string } {
  return { account: data.account ?? `job:${data.jobId}`, plan: data.plan };
}

export class FairShare {
  private readonly advance: AdvanceCommand;

  constructor(
    redis: RedisClient,
    private readonly config: AppConfig,
  ) {
    // defineCommand sends EVALSHA (the script body travels once per connection).
    redis.defineCommand('mjFairAdvance', { numberOfKeys: 3, lua: ADVANCE });
    this.advance = (redis as unknown as { mjFairAdvance: AdvanceCommand }).mjFairAdvance.bind(redis);
  }

  /** A media sink that gives each unit its priority before handing it to `inner`. */
  sink(inner: UnitSink<'media'>, region: string): UnitSink<'media'> {
    return { add: async (units) => inner.add(await this.prioritise(region, units)) };
  }

  async prioritise(region: string, units: QueueUnit<'media'>[]): Promise<QueueUnit<'media'>[]> {
    const keys = fairShareKeys(this.config, queueName('media', region));
    const byAccount = new Map<string, { plan?: string; units: QueueUnit<'media'>[] }>();
    for (const unit of units) {
      if (unit.name === PROCESS_JOB) continue;
      const { account, plan } = unitOwner(unit.data);
      const group = byAccount.get(account) ?? { plan, units: [] };
      group.units.push(unit);
      byAccount.set(account, group);
    }
    const priorities = new Map<QueueUnit<'media'>, number>();
    for (const [account, group] of byAccount) {
      const cost = COST / planWeight(group.plan);
      const start = Number(
        await this.advance(keys.clock, keys.finish, keys.prioritized, account, cost, group.units.length),
      );
      group.units.forEach((unit, k) => priorities.set(unit, Math.min(MAX_PRIORITY, start + cost * (k + 1))));
    }
    return units.map((unit) => ({ ...unit, priority: priorities.get(unit) ?? FAN_OUT_PRIORITY }));
  }
}
