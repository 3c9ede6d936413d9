// The account's events as they happen (GET /v1/events/stream, server-sent events), as an async
// iterable that reconnects by itself with Last-Event-ID, so no event is skipped across a dropped
// connection. Used by `mediajobs listen`.

import type { HttpClient } from './http.js';
import type { RequestOptions } from './types.js';

export interface StreamedEvent {
  /** evt_… (also the webhook-id a delivery of this event carries). */
  id: string;
  /** e.g. job.succeeded, job.failed, webhook.test. */
  event: string;
  /** The event body exactly as the stream sent it: the bytes to sign and forward. */
  data: string;
}

export interface EventStreamOptions extends Pick<RequestOptions, 'signal'> {
  /** Resume right after this event (evt_…); default: events from the moment of connection. */
  lastEventId?: string;
  /** Called when the connection drops, before the reconnect after `delayMs`. */
  onReconnect?: (info: { delayMs: number; error: unknown }) => void;
  /** Called once per successful connection (first and after each reconnect). */
  onConnect?: () => void;
}

const MAX_RECONNECT_DELAY_MS = 10_000;

/** Reads `event:`/`id:`/`data:` blocks (the SSE format, blank line = end of an event) from a body. */
export async function* parseEventStream(body: AsyncIterable<Uint8Array>): AsyncGenerator<StreamedEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  let id = '';
  let event = 'message';
  let data: string[] = [];
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    for (let newline = buffer.indexOf('\n'); newline >= 0; newline = buffer.indexOf('\n')) {
      const line = buffer.slice(0, newline).replace(/\r$/, '');
      buffer = buffer.slice(newline + 1);
      if (line === '') {
        if (data.length > 0) yield { id, event, data: data.join('\n') };
        event = 'message';
        data = [];
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'id') id = value;
      else if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
    }
  }
}

/** Every event of the account from now (or after `lastEventId`) until `signal` aborts. */
export async function* streamEvents(http: HttpClient, options: EventStreamOptions = {}): AsyncGenerator<StreamedEvent> {
  let lastEventId = options.lastEventId;
  let failures = 0;
  while (!options.signal?.aborted) {
    try {
      const response = await http.requestStream({
        method: 'GET',
        path: '/v1/events/stream',
        headers: { accept: 'text/event-stream', ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
        options: { signal: options.signal, maxRetries: 0 },
      });
      options.onConnect?.();
      failures = 0;
      if (!response.body) throw new Error('the event stream has no body');
      for await (const event of parseEventStream(response.body as unknown as AsyncIterable<Uint8Array>)) {
        lastEventId = event.id || lastEventId;
        yield event;
      }
      throw new Error('the event stream ended');
    } catch (error) {
      if (options.signal?.aborted) return;
      // Refusals that a reconnect cannot fix (a bad key, a missing scope) end the stream.
      const status = (error as { status?: number | null }).status;
      if (typeof status === 'number' && status >= 400 && status < 500 && status !== 429) throw error;
      failures += 1;
      const delayMs = Math.min(MAX_RECONNECT_DELAY_MS, 500 * 2 ** Math.min(failures - 1, 5));
      options.onReconnect?.({ delayMs, error });
      await http.sleep(delayMs);
    }
  }
}
