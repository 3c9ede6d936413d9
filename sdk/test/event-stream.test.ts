// The server-sent-events reader behind `client.events.stream()` and `mediajobs listen`.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseEventStream } from '../src/index.js';

async function* chunks(...parts: string[]): AsyncGenerator<Uint8Array> {
  for (const part of parts) yield new TextEncoder().encode(part);
}

test('events split across chunks, comments skipped, CRLF and multi-line data joined', async () => {
  const events = [];
  for await (const event of parseEventStream(
    chunks(
      'retry: 2000\n: hello\n\nid: evt_1\nevent: job.fai',
      'led\ndata: {"id":"evt_1"}\n\n: keep-alive\n\n',
      'id: evt_2\r\nevent: job.succeeded\r\ndata: {"a":\r\ndata: 1}\r\n\r\n',
    ),
  )) {
    events.push(event);
  }
  assert.deepEqual(events, [
    { id: 'evt_1', event: 'job.failed', data: '{"id":"evt_1"}' },
    { id: 'evt_2', event: 'job.succeeded', data: '{"a":\n1}' },
  ]);
});
