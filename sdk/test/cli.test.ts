// The built CLI (dist/cli.js) run as a child process against the fault server, output captured.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, test } from 'node:test';
import { renderProgress } from '../src/cli.js';
import { envelope, jobView, startFaultServer } from './fault-server.js';
import type { Action, FaultServer, Handler } from './fault-server.js';

// Compiled to build/test/, so the package root is two levels up.
const CLI = resolve(__dirname, '..', '..', 'dist', 'cli.js');

let server: FaultServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

function run(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH ?? '', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

async function against(handler: Handler) {
  server = await startFaultServer(handler);
  return { MEDIAJOBS_API_KEY: 'mjk_test', MEDIAJOBS_BASE_URL: server.baseUrl };
}

describe('mediajobs CLI', () => {
  test('prints `code: message (doc_url)` and exits with the family code (billing → 4)', async () => {
    const env = await against(() => envelope(402, 'billing_error', 'insufficient_credits', false));
    const { code, stdout, stderr } = await run(['credits'], env);
    assert.equal(code, 4);
    assert.equal(stdout, '');
    assert.equal(
      stderr,
      'insufficient_credits: Test message for insufficient_credits. (https://docs.example.test/errors.html#insufficient_credits)\n',
    );
  });

  test('auth errors exit 3; an unknown family exits 1', async () => {
    let env = await against(() => envelope(401, 'auth_error', 'invalid_api_key', false));
    assert.equal((await run(['jobs', 'get', 'sdr2hdr', 'job_1'], env)).code, 3);
    await server?.close();
    env = await against(() => envelope(400, 'brand_new_family', 'brand_new_code', false));
    const result = await run(['jobs', 'list', 'audio', '--limit', '2'], env);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /^brand_new_code: /);
    assert.equal(server?.requests[0]?.path, '/v1/audio/jobs?limit=2');
  });

  test('a connection refused exits 11 with connection_error', async () => {
    const env = await against(() => ({ status: 200, json: {} }));
    await server?.close();
    const { code, stderr } = await run(['credits'], env);
    assert.equal(code, 11);
    assert.match(stderr, /connection_error: Could not reach http:\/\/127\.0\.0\.1:\d+/);
  });

  test('an existing output is refused without --force, before any request', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mediajobs-cli-'));
    writeFileSync(join(dir, 'out.mp4'), 'keep me');
    const env = await against(() => ({ status: 200, json: {} }));
    const result = await run(['convert', 'https://example.test/in.mp4', '--to', join(dir, 'out.mp4')], env);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /out\.mp4 exists; pass --force to overwrite it/);
    assert.equal(server?.requests.length, 0);
    assert.equal(readFileSync(join(dir, 'out.mp4'), 'utf8'), 'keep me');
  });

  test('usage errors exit 2 (missing key, unknown command, bad API name)', async () => {
    assert.equal((await run(['credits'], {})).code, 2);
    const env = await against(() => ({ status: 200, json: {} }));
    const unknown = await run(['frobnicate'], env);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /^usage_error: unknown command "frobnicate"/);
    assert.equal((await run(['jobs', 'get', 'video', 'job_1'], env)).code, 2);
    const quality = await run(['convert', 'in.mp4', '--to', 'out.mp4', '--quality', 'ultra'], env);
    assert.equal(quality.code, 2);
    assert.match(quality.stderr, /^usage_error: --quality must be fast, balanced or best/);
    const mapping = await run(['convert', 'in.mp4', '--to', 'out.mp4', '--mapping', 'brighter'], env);
    assert.equal(mapping.code, 2);
    assert.match(mapping.stderr, /^usage_error: --mapping must be reference or expand/);
    const transfer = await run(['convert', 'in.mp4', '--to', 'out.mp4', '--transfer', 'dv'], env);
    assert.equal(transfer.code, 2);
    assert.match(transfer.stderr, /^usage_error: --transfer must be pq or hlg/);
    assert.equal(server?.requests.length, 0);
  });

  test('`convert --help` and `jobs get -h`: that command’s usage on stdout, exit 0, no key needed', async () => {
    const convert = await run(['convert', 'in.mp4', '--to', 'out.mp4', '--help'], {});
    assert.equal(convert.code, 0);
    assert.equal(convert.stderr, '');
    assert.match(convert.stdout, /^Usage:\n  mediajobs convert <file\|url> --to out\.mp4 /);
    assert.match(convert.stdout, /--peak-nits +mastering peak in nits/);
    const get = await run(['jobs', 'get', '-h'], {});
    assert.equal(get.code, 0);
    assert.match(get.stdout, /^Usage:\n  mediajobs jobs get <sdr2hdr\|audio> <job_id>\n\nShows one job/);
  });

  test('an unknown option names itself and the command help, in balanced quotes', async () => {
    const env = await against(() => ({ status: 200, json: {} }));
    const result = await run(['convert', 'in.mp4', '--to', 'out.mp4', '--frobnicate'], env);
    assert.equal(result.code, 2);
    assert.equal(
      result.stderr,
      "usage_error: unknown option --frobnicate\nRun 'mediajobs convert --help' for its options.\n",
    );
    const missing = await run(['ledger', '--limit'], env);
    assert.match(missing.stderr, /^usage_error: --limit needs a value\n/);
    assert.equal(server?.requests.length, 0);
  });

  test('convert of a WAV says the file has no video stream and names the audio command, before any request', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mediajobs-cli-'));
    // One second of 8 kHz 16-bit mono PCM: a RIFF/WAVE header, a fmt chunk and a data chunk.
    const fmt = Buffer.alloc(24);
    fmt.write('fmt ', 0, 'latin1');
    fmt.writeUInt32LE(16, 4);
    fmt.writeUInt16LE(1, 8);
    fmt.writeUInt16LE(1, 10);
    fmt.writeUInt32LE(8000, 12);
    fmt.writeUInt32LE(16000, 16);
    fmt.writeUInt16LE(2, 20);
    fmt.writeUInt16LE(16, 22);
    const data = Buffer.concat([Buffer.from('data', 'latin1'), Buffer.alloc(4), Buffer.alloc(16000)]);
    data.writeUInt32LE(16000, 4);
    const riff = Buffer.from('RIFF\0\0\0\0WAVE', 'latin1');
    riff.writeUInt32LE(4 + fmt.length + data.length, 4);
    writeFileSync(join(dir, 'speech.wav'), Buffer.concat([riff, fmt, data]));
    const env = await against(() => ({ status: 500 }));
    const result = await run(['convert', join(dir, 'speech.wav'), '--to', join(dir, 'out.mp4')], env);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /^usage_error: speech\.wav has no video stream; for audio use `mediajobs audio`\n/);
    assert.doesNotMatch(result.stderr, /missing_parameter|media\.width/);
    assert.equal(server?.requests.length, 0);
  });

  test('credits prints the balance as JSON', async () => {
    const env = await against(() => ({ status: 200, json: { object: 'credit_balance', available_credits: 42 } }));
    const { code, stdout } = await run(['credits'], env);
    assert.equal(code, 0);
    assert.equal(JSON.parse(stdout).available_credits, 42);
  });

  test('convert: uploads, submits, shows progress lines, downloads the result', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mediajobs-cli-'));
    const input = join(dir, 'in.mp4');
    const output = join(dir, 'out.mp4');
    writeFileSync(input, 'fake video bytes');
    const item = {
      index: 0,
      status: 'succeeded',
      output: {
        asset_id: 'ast_1',
        url: '/v1/assets/ast_1/content?sig=abc',
        expires_at: 'x',
        size_bytes: 6,
        container: 'mp4',
      },
      error: null,
    };
    const views = [
      jobView({ status: 'processing', progress: 0.25 }),
      jobView({
        status: 'succeeded',
        progress: 1,
        items: [item],
        billing: { estimated_credits: 24, charged_credits: 20 },
      }),
    ];
    const estimate = {
      object: 'job_estimate',
      estimated_credits: 24,
      estimated_usd: 0.14,
      usd_per_credit: 0.006,
      estimated_seconds: 40,
      duration_seconds: 12,
      accepted: true,
      error: null,
    };
    let polls = 0;
    const env = await against((request): Action => {
      if (request.method === 'POST' && request.path.startsWith('/v1/uploads?')) {
        return { status: 201, json: { upload_id: 'upl_1', size_bytes: 16, sha256: 'x', expires_at: 'y' } };
      }
      if (request.method === 'POST' && request.path === '/v1/sdr2hdr/jobs/estimate')
        return { status: 200, json: estimate };
      if (request.method === 'POST' && request.path === '/v1/sdr2hdr/jobs') return { status: 202, json: jobView() };
      if (request.path === '/v1/sdr2hdr/jobs/job_test1') return { status: 200, json: views[Math.min(polls++, 1)] };
      if (request.path.startsWith('/v1/assets/ast_1/content')) return { status: 200, body: 'HDR10!' };
      return envelope(404, 'invalid_request_error', 'route_not_found', false);
    });
    const { code, stdout, stderr } = await run(
      [
        'convert',
        input,
        '--to',
        output,
        '--resolution',
        '1080p',
        '--quality',
        'best',
        '--mapping',
        'expand',
        '--transfer',
        'hlg',
      ],
      env,
    );
    assert.equal(code, 0, stderr);
    assert.equal(readFileSync(output, 'utf8'), 'HDR10!');
    assert.match(stdout, /^saved .*out\.mp4 \(job job_test1, succeeded, charged 20 credits\) in \d+:\d\d\n$/);
    assert.match(
      stderr,
      /^estimate: 24 credits \(\$0\.14 at \$0\.006\/credit\) for 12\.0 s of media; about 0:40 of processing$/m,
    );
    // No Content-Length from this server (chunked): the bytes so far, without a total.
    assert.match(stderr, /^downloading .*out\.mp4: 6 B$/m);
    // Not a terminal here, so progress comes as plain lines rather than a redrawn bar.
    assert.match(stderr, /^processing +\[#+-+\] +25% ETA /m);
    assert.match(stderr, /^succeeded +\[#{30}\] 100% ETA --:--$/m);
    assert.doesNotMatch(stderr, /\r/);
    // Headers that say nothing about the media: uploaded first, then priced by its upload, then submitted.
    const [upload, estimated, submit] = server?.requests ?? [];
    assert.equal(upload?.headers['content-type'], 'video/mp4');
    // Named after the file, so the job view and the dashboard show "in.mp4", not the upload id.
    assert.equal(upload?.path, '/v1/uploads?filename=in.mp4');
    assert.equal(upload?.body.toString(), 'fake video bytes');
    assert.equal(estimated?.path, '/v1/sdr2hdr/jobs/estimate');
    assert.deepEqual(JSON.parse(String(estimated?.body)).inputs, [{ upload_id: 'upl_1' }]);
    assert.deepEqual(JSON.parse(String(submit?.body)), {
      inputs: [{ upload_id: 'upl_1' }],
      output: { resolution: '1080p', container: 'mp4', quality: 'best', mapping: 'expand', transfer: 'hlg' },
    });
  });

  test('audio: a failed job exits 8 with the job error, and `--lufs -16` is accepted', async () => {
    const error = {
      type: 'processing_error',
      code: 'no_speech_detected',
      message: 'No speech was found in the input.',
      request_id: 'req_1',
      doc_url: 'https://docs.example.test/errors.html#no_speech_detected',
      retryable: false,
    };
    const env = await against((request): Action => {
      if (request.path === '/v1/audio/jobs/estimate') {
        return {
          status: 200,
          json: {
            estimated_credits: 1,
            estimated_usd: 0.01,
            usd_per_credit: 0.008,
            estimated_seconds: 2,
            duration_seconds: 5,
            accepted: true,
            error: null,
          },
        };
      }
      if (request.method === 'POST') return { status: 202, json: jobView({ api: 'audio' }) };
      return { status: 200, json: jobView({ api: 'audio', status: 'failed', error }) };
    });
    const { code, stderr } = await run(['audio', 'https://example.test/a.wav', '--lufs', '-16'], env);
    assert.equal(code, 8);
    assert.match(
      stderr,
      /no_speech_detected: No speech was found in the input\. \(https:\/\/docs\.example\.test\/errors\.html#no_speech_detected\)\n$/,
    );
    const submits = server?.requests.filter((request) => request.path === '/v1/audio/jobs') ?? [];
    assert.equal(submits.length, 1, 'submitted once');
    assert.deepEqual(JSON.parse(String(submits[0]?.body)).output, { target_lufs: -16, container: 'wav' });
  });

  test('renderProgress draws a bar with an ETA extrapolated from the elapsed time', () => {
    assert.equal(renderProgress(0.5, 30_000, 10), '[#####-----]  50% ETA 0:30');
    assert.equal(renderProgress(0.25, 3_600_000, 4), '[#---]  25% ETA 3:00:00');
    assert.equal(renderProgress(0, 0, 4), '[----]   0% ETA --:--');
  });
});
