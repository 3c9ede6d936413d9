// Requests Node's HTTP server handles outside the routes: a CONNECT (tunnel) request, which Node hands
// to a 'connect' listener or else drops without a word, and a request with two Host headers, which
// Node's parser takes (keeping the first). Both get the error envelope, as everything this service answers.
import { connect } from 'node:net';
import { CATALOGUE, type ErrorCode } from '../../src/common/errors/catalogue';
import { startApi, type TestApi } from '../support/app';

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: any;
}

describe('odd requests get the envelope', () => {
  let api: TestApi;

  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(async () => {
    await api?.close();
  });

  /** Writes `head` on a fresh connection; what the server sent before closing (or going quiet for 2 s). */
  function exchange(head: string): Promise<RawResponse> {
    return new Promise((resolve, reject) => {
      const socket = connect(Number(new URL(api.url).port), '127.0.0.1', () => socket.write(head));
      let text = '';
      socket.setEncoding('latin1');
      socket.on('data', (chunk: string) => (text += chunk));
      socket.setTimeout(2000, () => socket.destroy());
      socket.on('error', reject);
      socket.on('close', () => {
        const [top, ...rest] = text.split('\r\n\r\n');
        const [statusLine, ...lines] = top.split('\r\n');
        const headers: Record<string, string> = {};
        for (const line of lines) {
          const colon = line.indexOf(':');
          if (colon > 0) headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
        }
        let body: unknown = rest.join('\r\n\r\n');
        try {
          body = JSON.parse(body as string);
        } catch {
          // keep the text
        }
        resolve({ status: Number(statusLine.split(' ')[1] ?? 0), headers, body });
      });
    });
  }

  function expectEnvelope(response: RawResponse, code: ErrorCode, param: string | null): void {
    expect({ status: response.status, code: response.body?.error?.code, param: response.body?.error?.param }).toEqual({
      status: CATALOGUE[code].status,
      code,
      param,
    });
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.headers['x-request-id']).toMatch(/^req_/);
    expect(response.body.error.request_id).toBe(response.headers['x-request-id']);
  }

  it('CONNECT (a tunnel request) is 405 method_not_allowed, not a dropped connection', async () => {
    const response = await exchange('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    expectEnvelope(response, 'method_not_allowed', null);
  });

  it('two Host headers are 400 invalid_parameter (param Host), whichever route is asked for', async () => {
    for (const path of ['/health/live', '/v1/account/credits', '/docs/openapi.json']) {
      const response = await exchange(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\n\r\n`);
      expectEnvelope(response, 'invalid_parameter', 'Host');
    }
    // One Host header is fine.
    const one = await exchange('GET /health/live HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    expect(one.status).toBe(200);
  });
});
