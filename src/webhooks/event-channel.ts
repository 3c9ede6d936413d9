// The account's events as Redis pub/sub messages: how an event reaches the API instances holding that
// account's open streams (event-feed.ts) without any of them polling the database. One channel per
// account, each message an event's webhook body (JSON). Published twice, deliberately: right after the
// transaction that wrote the event commits (outbox.writer.ts: the fast path), and again by the worker's
// relay when it turns the event into deliveries (webhook-dispatcher.ts), so an event whose first
// publication was lost (the process died after its commit, or Redis failed the command) still reaches
// open streams about a second later. Streams deduplicate by event id.
import type { EventPayload } from './event-payload';
import type { RedisClient } from '../common/redis/redis.module';

export function eventChannel(redisPrefix: string, accountId: string): string {
  return `${redisPrefix}:events:${accountId}`;
}

/** Best effort: the relay publishes again, and a stream that misses both catches up when it resumes. */
export async function publishEvents(
  redis: RedisClient,
  redisPrefix: string,
  events: { accountId: string; payload: EventPayload }[],
): Promise<void> {
  if (!events.length) return;
  const pipeline = redis.pipeline();
  for (const { accountId, payload } of events)
    pipeline.publish(eventChannel(redisPrefix, accountId), JSON.stringify(payload));
  await pipeline.exec();
}
