// A scripted HTTP server on 127.0.0.1 (port 0) that records every request it gets and answers
// with whatever the test says: a response, a dropped connection, or no answer at all.

import { createServer } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface Reply {
  status: number;
  json?: unknown;
  body?: string | Buffer;
  headers?: Record<string, string>;
}

/** 'drop' destroys the socket without a response; 'hang' never answers. */
export type Action = Reply | 'drop' | 'hang';

export type Handler = (request: RecordedRequest, index: number) => Action;

export interface FaultServer {
  baseUrl: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

export async function startFaultServer(handler: Handler): Promise<FaultServer> {
  const requests: RecordedRequest[] = [];
  let counter = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const recorded = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks),
      };
      requests.push(recorded);
      const action = handler(recorded, counter);
      counter += 1;
      if (action === 'drop') {
        req.socket.destroy();
        return;
      }
      if (action === 'hang') return;
      const body = action.json !== undefined ? JSON.stringify(action.json) : (action.body ?? '');
      res.writeHead(action.status, {
        'x-request-id': `req_test${counter}`,
        ...(action.json !== undefined ? { 'content-type': 'application/json' } : {}),
        ...action.headers,
      });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Answers the scripted actions in order, then repeats the last one. */
export function sequence(...actions: Action[]): Handler {
  return (_request, index) => actions[Math.min(index, actions.length - 1)] as Action;
}

/** The service's error envelope (docs/api-decisions.md §1) with a status. */
export function envelope(
  status: number,
  type: string,
  code: string,
  retryable: boolean,
  extra: { param?: string | null; details?: Record<string, unknown>; headers?: Record<string, string> } = {},
): Reply {
  return {
    status,
    headers: extra.headers,
    json: {
      error: {
        type,
        code,
        message: `Test message for ${code}.`,
        param: extra.param ?? null,
        request_id: 'req_envelope',
        doc_url: `https://docs.example.test/errors.html#${code}`,
        retryable,
        ...(extra.details ? { details: extra.details } : {}),
      },
    },
  };
}

/** A job view (docs/api-decisions.md §4) with overrides. */
export function jobView(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    object: 'job',
    job_id: 'job_test1',
    api: 'sdr2hdr',
    status: 'queued',
    created_at: '2025-01-01T00:00:00Z',
    started_at: null,
    finished_at: null,
    progress: 0,
    items: [],
    billing: { estimated_credits: 24, charged_credits: 0, refunded: false, state: 'authorised' },
    error: null,
    metadata: {},
    ...overrides,
  };
}
