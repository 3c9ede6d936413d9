// The proxy and its origin both live on 127.0.0.1; ffprobe only ever talks to the proxy.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import * as http from 'node:http';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { announcedSize, withPinnedProxy } from '../../src/common/net/pinned-proxy';
import { fakeLookup, type LocalOrigin, readBody, serveBytes, startOrigin } from './local-origin';

const run = promisify(execFile);

function get(
  url: string,
  headers: http.OutgoingHttpHeaders = {},
  method = 'GET',
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http
      .request(url, { method, headers, agent: false }, (res) => {
        readBody(res).then((body) => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }), reject);
      })
      .on('error', reject)
      .end();
  });
}

describe('withPinnedProxy', () => {
  let dir: string;
  let media: Buffer;
  let origin: LocalOrigin;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mj-net-proxy-'));
    const file = join(dir, 't.mp4');
    await run('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc2=d=1:s=160x90', '-pix_fmt', 'yuv420p', file]);
    media = await readFile(file);
    const serveMedia = serveBytes(media, 'video/mp4');
    origin = await startOrigin((req, res) => {
      if (req.url === '/v/t.mp4') serveMedia(req, res);
      else if (req.url === '/signed/t.mp4') res.writeHead(302, { location: '/v/t.mp4' }).end();
      else if (req.url === '/to-private') res.writeHead(302, { location: 'http://10.0.0.5/t.mp4' }).end();
      else if (req.url === '/gone.mp4') res.writeHead(403).end('signature expired');
      else if (req.url === '/flaky.mp4') res.writeHead(503).end();
      else res.writeHead(404).end();
    });
  });
  afterAll(async () => {
    await origin.close();
    await rm(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    origin.requests.length = 0;
  });

  const options = { allow: ['127.0.0.1'], timeoutMs: 5000 };

  it('forwards a Range request and returns 206 partial content from the origin', async () => {
    const outcome = await withPinnedProxy(`${origin.base}/v/t.mp4`, options, async (localUrl) => {
      expect(localUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/[0-9a-f]{32}\/source\.mp4$/);
      return get(localUrl, { range: 'bytes=100-199', 'if-range': '"v1"', cookie: 'not-forwarded' });
    });
    if (!outcome.ok) throw new Error(outcome.reason);
    expect(outcome.value.status).toBe(206);
    expect(outcome.value.headers['content-range']).toBe(`bytes 100-199/${media.length}`);
    expect(outcome.value.headers['accept-ranges']).toBe('bytes');
    expect(outcome.value.body.equals(media.subarray(100, 200))).toBe(true);
    // The whole source's size, from the Content-Range total: what submit checks against MAX_SOURCE_BYTES.
    expect(outcome.sizeBytes).toBe(media.length);
    expect(origin.requests[0].headers).toMatchObject({ range: 'bytes=100-199', 'if-range': '"v1"' });
    expect(origin.requests[0].headers.cookie).toBeUndefined();
  });

  it('passes HEAD, 416 and unknown paths through as a media tool expects', async () => {
    const outcome = await withPinnedProxy(`${origin.base}/v/t.mp4`, options, async (localUrl) => ({
      head: await get(localUrl, {}, 'HEAD'),
      beyond: await get(localUrl, { range: `bytes=${media.length + 10}-` }),
      other: await get(new URL('/elsewhere', localUrl).href),
      post: await get(localUrl, {}, 'POST'),
    }));
    if (!outcome.ok) throw new Error(outcome.reason);
    expect(outcome.value.head).toMatchObject({ status: 200, headers: { 'content-length': String(media.length) } });
    expect(outcome.value.head.body).toHaveLength(0);
    expect(outcome.value.beyond.status).toBe(416);
    expect(outcome.value.other.status).toBe(404);
    expect(outcome.value.post.status).toBe(405);
  });

  it('lets ffprobe probe the source with Range requests, following a redirect inside', async () => {
    const lookup = fakeLookup({ 'cdn.test': ['127.0.0.1'] });
    const outcome = await withPinnedProxy(
      `http://cdn.test:${origin.port}/signed/t.mp4`,
      { ...options, lookup },
      async (localUrl) => {
        const { stdout } = await run(
          'ffprobe',
          ['-v', 'error', '-show_format', '-show_streams', '-of', 'json', localUrl],
          {
            timeout: 20_000,
          },
        );
        return JSON.parse(stdout) as {
          format: { format_name: string };
          streams: { codec_type: string; width?: number; height?: number }[];
        };
      },
    );
    if (!outcome.ok) throw new Error(outcome.reason);
    expect(outcome.value.format.format_name).toContain('mp4');
    expect(outcome.value.streams).toContainEqual(
      expect.objectContaining({ codec_type: 'video', width: 160, height: 90 }),
    );
    // Every forwarded request went through the redirect and reached the origin as a Range request.
    const served = origin.requests.filter((request) => request.url === '/v/t.mp4');
    expect(served.every((request) => /^bytes=\d+-/.test(request.headers.range ?? ''))).toBe(true);
    // The moov box sits after mdat, so ffprobe had to seek: a Range request not starting at 0.
    expect(served.some((request) => /^bytes=[1-9]\d*-/.test(request.headers.range ?? ''))).toBe(true);
    expect(origin.requests.every((request) => request.headers.host === `cdn.test:${origin.port}`)).toBe(true);
    expect(lookup.calls.length).toBe(1 + origin.requests.length); // the up-front check, then every hop
  });

  it('refuses a private source before starting, without calling the tool', async () => {
    const fn = jest.fn(async () => 'probed');
    const outcome = await withPinnedProxy('http://10.0.0.5/t.mp4', { allow: [], timeoutMs: 5000 }, fn);
    expect(outcome).toMatchObject({ ok: false, code: 'invalid_url' });
    expect(fn).not.toHaveBeenCalled();
  });

  it('reports a redirect to a private address as invalid_url, whatever the tool concluded', async () => {
    const outcome = await withPinnedProxy(
      `${origin.base}/to-private`,
      options,
      async (localUrl) => (await get(localUrl)).status,
    );
    expect(outcome).toMatchObject({ ok: false, code: 'invalid_url', reason: expect.stringMatching(/private/) });
  });

  it('reports a rebinding name as invalid_url when a later forwarded request resolves privately', async () => {
    const lookup = fakeLookup({ 'rebind.test': [['127.0.0.1'], ['10.0.0.5']] });
    const outcome = await withPinnedProxy(
      `http://rebind.test:${origin.port}/v/t.mp4`,
      { ...options, lookup },
      async (localUrl) => {
        return (await get(localUrl)).status;
      },
    );
    expect(outcome).toMatchObject({ ok: false, code: 'invalid_url' });
    expect(origin.requests).toHaveLength(0);
  });

  it('turns the tool failing on a 403 source into invalid_url and on a 503 source into upstream_error', async () => {
    const failingTool = async (localUrl: string): Promise<never> => {
      await run('ffprobe', ['-v', 'error', '-show_format', localUrl], { timeout: 20_000 });
      throw new Error('ffprobe should have failed');
    };
    await expect(withPinnedProxy(`${origin.base}/gone.mp4`, options, failingTool)).resolves.toMatchObject({
      ok: false,
      code: 'invalid_url',
      status: 403,
    });
    await expect(withPinnedProxy(`${origin.base}/flaky.mp4`, options, failingTool)).resolves.toMatchObject({
      ok: false,
      code: 'upstream_error',
      status: 503,
    });
  });

  it('rethrows the tool error when the source was fine, and closes the server either way', async () => {
    let localUrl = '';
    await expect(
      withPinnedProxy(`${origin.base}/v/t.mp4`, options, async (url) => {
        localUrl = url;
        throw new Error('tool crashed');
      }),
    ).rejects.toThrow('tool crashed');
    await expect(get(localUrl)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('closes a connection the tool left open when fn settles', async () => {
    let leftOpen: Socket | undefined;
    const outcome = await withPinnedProxy(`${origin.base}/v/t.mp4`, options, async (localUrl) => {
      await new Promise<void>((resolve) => {
        // Reads one chunk, then stops reading: a tool that walked away mid-body.
        http.get(localUrl, { agent: false }, (res) => {
          leftOpen = res.socket;
          res.once('data', () => {
            res.pause();
            resolve();
          });
        });
      });
      return 'done';
    });
    expect(outcome).toEqual({ ok: true, value: 'done', sizeBytes: media.length });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(leftOpen?.destroyed).toBe(true);
  });
});

describe('announcedSize (what submit holds to MAX_SOURCE_BYTES)', () => {
  it('reads the whole size from a Content-Range total, or from a full answer’s Content-Length', () => {
    expect(announcedSize(206, { 'content-range': 'bytes 0-99/12345', 'content-length': '100' })).toBe(12345);
    expect(announcedSize(200, { 'content-length': '4096' })).toBe(4096);
    expect(announcedSize(416, { 'content-range': 'bytes */777' })).toBe(777);
  });

  it('is null when the source does not say: an unknown total, a partial length, no headers', () => {
    expect(announcedSize(206, { 'content-range': 'bytes 0-99/*', 'content-length': '100' })).toBeNull();
    expect(announcedSize(206, { 'content-length': '100' })).toBeNull();
    expect(announcedSize(200, {})).toBeNull();
  });
});
