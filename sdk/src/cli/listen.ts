// listen: the account's events forwarded to a local URL as signed webhook deliveries.
import { randomBytes } from 'node:crypto';
import type { MediaJobs } from '../client.js';
import type { StreamedEvent } from '../event-stream.js';
import { VERSION } from '../version.js';
import { signWebhook } from '../webhooks.js';
import { parse, UsageError } from './args.js';
import type { CliIo } from './io.js';

/**
 * `listen`: the account's events from GET /v1/events/stream, each POSTed to a local URL exactly as a
 * webhook delivery would be (same body, Standard Webhooks headers signed with `--secret`, or with a
 * secret made for this session and printed), so a receiver can be built without a public address.
 * Runs until interrupted (SIGINT/SIGTERM → exit 0).
 */
export async function listen(client: MediaJobs, args: string[], io: CliIo, signal: AbortSignal): Promise<number> {
  const { values } = parse(args, {
    'forward-to': { type: 'string' },
    secret: { type: 'string' },
    events: { type: 'string' },
  });
  const target = values['forward-to'];
  if (!target || !/^https?:\/\//i.test(target))
    throw new UsageError('listen needs --forward-to http://localhost:PORT/path');
  const secret = values.secret ?? io.env.MEDIAJOBS_WEBHOOK_SECRET ?? `whsec_${randomBytes(24).toString('base64')}`;
  if (!secret.startsWith('whsec_')) throw new UsageError('--secret must be a webhook secret (whsec_…)');
  const wanted = values.events ? new Set(values.events.split(',').filter(Boolean)) : null;
  let ready = false;
  const stream = client.events.stream({
    signal,
    onConnect: () => {
      if (ready) {
        io.stderr.write('reconnected\n');
        return;
      }
      ready = true;
      io.stderr.write(
        `Ready. Forwarding this account's events to ${target}\n` +
          `Signing secret for this session: ${secret}\n` +
          '(verify with it as with an endpoint secret; Ctrl-C to stop)\n',
      );
    },
    onReconnect: ({ delayMs, error }) =>
      io.stderr.write(
        `connection lost (${error instanceof Error ? error.message : String(error)}); reconnecting in ${(delayMs / 1000).toFixed(1)} s\n`,
      ),
  });
  try {
    for await (const event of stream) {
      if (wanted && !wanted.has(event.event)) continue;
      await forward(event, target, secret, io);
    }
  } catch (error) {
    if (!signal.aborted) throw error;
  }
  return 0;
}

async function forward(event: StreamedEvent, target: string, secret: string, io: CliIo): Promise<void> {
  const timestamp = Math.floor(Date.now() / 1000);
  const started = Date.now();
  let outcome: string;
  try {
    const response = await fetch(target, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': `mediajobs-cli-listen/${VERSION}`,
        'webhook-id': event.id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signWebhook(secret, event.id, timestamp, event.data),
      },
      body: event.data,
      signal: AbortSignal.timeout(10_000),
    });
    await response.arrayBuffer();
    outcome = `[${response.status}]`;
  } catch (error) {
    // The local server is down or slow: say so and go on with the next event, as a delivery would fail.
    outcome = `[failed: ${error instanceof Error ? error.message : String(error)}]`;
  }
  io.stdout.write(
    `${new Date().toISOString()} ${event.event} ${event.id} → POST ${target} ${outcome} ${Date.now() - started} ms\n`,
  );
}
