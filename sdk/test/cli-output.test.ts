// What the CLI prints for people, as snapshots: tables and summaries on a terminal, the API's JSON
// with --json or when piped, one line and a hint for a usage error. `main` runs in this process with
// a fake terminal against the fault server's fixed answers; the port is normalised. Update the files
// in test/snapshots/ with UPDATE_SNAPSHOTS=1 npm test (and read the diff).

import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, test } from 'node:test';
import { main } from '../src/cli.js';
import { jobView, startFaultServer, type FaultServer, type Handler } from './fault-server.js';

// Compiled to build/test/, the snapshots stay beside the sources.
const SNAPSHOTS = resolve(__dirname, '..', '..', 'test', 'snapshots');

function expectSnapshot(name: string, actual: string): void {
  const file = resolve(SNAPSHOTS, `${name}.txt`);
  if (process.env.UPDATE_SNAPSHOTS === '1') writeFileSync(file, actual);
  assert.ok(existsSync(file), `no snapshot ${name}.txt: run with UPDATE_SNAPSHOTS=1`);
  assert.equal(actual, readFileSync(file, 'utf8'));
}

let server: FaultServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

class Capture extends Writable {
  text = '';
  constructor(readonly isTTY: boolean) {
    super();
  }
  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    this.text += chunk.toString();
    done();
  }
}

/** Runs the CLI with stdout a terminal (or a pipe), against `handler`; the output with the port normalised. */
async function cli(args: string[], handler: Handler, terminal = true) {
  await server?.close();
  server = await startFaultServer(handler);
  const stdout = new Capture(terminal);
  const stderr = new Capture(terminal);
  const code = await main(args, {
    stdout,
    stderr,
    env: { MEDIAJOBS_API_KEY: 'mjk_test', MEDIAJOBS_BASE_URL: server.baseUrl },
  });
  const normalise = (text: string) => text.replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:PORT');
  return { code, stdout: normalise(stdout.text), stderr: normalise(stderr.text) };
}

const list = (data: unknown[], hasMore = false) => ({
  status: 200,
  json: { object: 'list', data, has_more: hasMore, next_cursor: hasMore ? 'led_0002' : null },
});

const BALANCE = {
  object: 'credit_balance',
  balance_credits: 1,
  reserved_credits: 0,
  available_credits: 1,
  plan: 'pro',
  spend_limit_usd: 250,
  spent_usd: 12.5,
  period_start: '2026-01-01T00:00:00.000Z',
  period_resets_at: '2026-02-01T00:00:00.000Z',
  quota: { processing_minutes_limit: 6000, processing_minutes_used: 42 },
  running_jobs: 0,
  limits: { requests_per_second: 100, concurrent_jobs: 10, max_output_height: 2160, apis: ['sdr2hdr', 'audio'] },
};

describe('what the CLI prints', () => {
  test('credits on a terminal: a summary, "1 credit" in the singular', async () => {
    const result = await cli(['credits'], () => ({ status: 200, json: BALANCE }));
    assert.equal(result.code, 0);
    expectSnapshot('credits', result.stdout);
  });

  test('credits with --json, and credits piped: the API’s JSON', async () => {
    const flagged = await cli(['credits', '--json'], () => ({ status: 200, json: BALANCE }));
    assert.deepEqual(JSON.parse(flagged.stdout), BALANCE);
    const piped = await cli(['credits'], () => ({ status: 200, json: BALANCE }), false);
    assert.deepEqual(JSON.parse(piped.stdout), BALANCE);
  });

  test('ledger: a table, and how to get the next page', async () => {
    const entry = (id: string, kind: string, credits: number, balance: number, held: number, job: string | null) => ({
      object: 'ledger_entry',
      id,
      kind,
      credits,
      job_id: job,
      reason: kind === 'grant' ? 'welcome' : null,
      balance_after: balance,
      reserved_after: held,
      created_at: '2026-01-15T09:30:00.000Z',
    });
    // As the API sends them (credits never negative): a grant, then a job held 24, was charged 20 and released 4.
    const result = await cli(['ledger', '--limit', '4'], () =>
      list(
        [
          entry('led_0004', 'release', 4, 4980, 0, 'job_0001'),
          entry('led_0003', 'capture', 20, 4980, 4, 'job_0001'),
          entry('led_0002', 'authorise', 24, 5000, 24, 'job_0001'),
          entry('led_0001', 'grant', 5000, 5000, 0, null),
        ],
        true,
      ),
    );
    // The balance went down by the capture, and the CREDITS column says so.
    assert.match(result.stdout, /capture +-20 +4980 +4 /);
    assert.match(result.stdout, /authorise +hold 24 +5000 +24 /);
    expectSnapshot('ledger', result.stdout);
  });

  test('jobs list and jobs get', async () => {
    const job = jobView({
      job_id: 'job_0001',
      status: 'succeeded',
      progress: 1,
      created_at: '2026-01-15T09:30:00.000Z',
      finished_at: '2026-01-15T09:31:10.000Z',
      billing: { estimated_credits: 24, charged_credits: 24, refunded: false, state: 'settled' },
      items: [
        {
          index: 0,
          status: 'succeeded',
          source: { type: 'url', url: 'https://media.example.com/clip.mp4', filename: null },
          output: { asset_id: 'ast_0001', container: 'mp4', size_bytes: 5242880, url: 'https://x', expires_at: '' },
          checks: [],
          error: null,
        },
      ],
    });
    // The measured output and its checks: one item passed them all, one failed one (charged 0).
    const checked = jobView({
      job_id: 'job_0002',
      status: 'partially_succeeded',
      progress: 1,
      created_at: '2026-01-15T09:30:00.000Z',
      finished_at: '2026-01-15T09:31:10.000Z',
      billing: { estimated_credits: 40, charged_credits: 20, refunded: false, state: 'settled' },
      error: {
        type: 'processing_error',
        code: 'output_check_failed',
        message: 'The output failed its frame_count check.',
      },
      items: [
        {
          index: 0,
          status: 'succeeded',
          source: { type: 'upload', upload_id: 'upl_0001', filename: 'sunset-trailer.mp4' },
          output: {
            asset_id: 'ast_0002',
            container: 'mp4',
            size_bytes: 5242880,
            url: 'https://x',
            expires_at: '',
            video: {
              codec: 'hevc',
              profile: 'main10',
              bit_depth: 10,
              width: 1920,
              height: 1080,
              frame_rate: 29.97,
              frames: 300,
              duration_seconds: 10.01,
              primaries: 'bt2020',
              transfer: 'smpte2084',
              matrix: 'bt2020nc',
              light: { mapping: 'reference', mastering_peak_nits: 1000, max_cll: 987, max_fall: 212 },
              audio_streams: [{ codec: 'aac', channels: 2, sample_rate: 48000 }],
            },
          },
          checks: [
            {
              name: 'hdr_signalling',
              passed: true,
              expected: 'hevc main10 10-bit, bt2020/smpte2084/bt2020nc',
              measured: 'hevc main10 10-bit, bt2020/smpte2084/bt2020nc',
            },
            { name: 'frame_count', passed: true, expected: '300', measured: 300 },
            { name: 'duration', passed: true, expected: '10.01 s ± 0.033 s (one frame)', measured: 10.01 },
            { name: 'round_trip_ssim', passed: true, expected: '≥ 0.88 (balanced)', measured: 0.9612 },
          ],
          error: null,
        },
        {
          index: 1,
          status: 'failed',
          source: { type: 'upload', upload_id: 'upl_0002', filename: null },
          output: null,
          checks: [{ name: 'frame_count', passed: false, expected: '300', measured: 299 }],
          error: {
            type: 'processing_error',
            code: 'output_check_failed',
            message: 'The output failed its frame_count check.',
          },
        },
      ],
    });
    const measured = await cli(['jobs', 'get', 'sdr2hdr', 'job_0002'], () => ({ status: 200, json: checked }));
    // On a terminal too: the mapping, the mastering peak and the link to download the output.
    assert.match(measured.stdout, /mapping reference, mastering peak 1000 cd\/m²/);
    assert.match(measured.stdout, /^Download: https:\/\/x$/m);
    // An uploaded file is shown by its name; an upload made without one by its id.
    assert.match(measured.stdout, /^0 +succeeded +sunset-trailer\.mp4 /m);
    assert.match(measured.stdout, /^1 +failed +upl_0002 /m);
    expectSnapshot('jobs-get-checks', measured.stdout);
    const listed = await cli(['jobs', 'list', 'sdr2hdr'], () => list([job]));
    expectSnapshot('jobs-list', listed.stdout);
    const got = await cli(['jobs', 'get', 'sdr2hdr', 'job_0001'], () => ({ status: 200, json: job }));
    expectSnapshot('jobs-get', got.stdout);
  });

  test('keys list and webhooks list', async () => {
    const key = {
      object: 'api_key',
      id: 'key_0001',
      name: 'Render farm',
      prefix: 'mjk_live_ab',
      scopes: ['sdr2hdr', 'audio'],
      expires_at: null,
      revoked_at: null,
      last_used_at: '2026-01-16T10:00:00.000Z',
      created_at: '2026-01-15T09:30:00.000Z',
    };
    const keys = (await cli(['keys', 'list'], () => list([key, { ...key, id: 'key_0002', name: null }]))).stdout;
    assert.match(keys, /^key_0001 +Render farm +mjk_live_ab… /m);
    expectSnapshot('keys-list', keys);
    const endpoint = {
      object: 'webhook_endpoint',
      id: 'we_0001',
      url: 'https://example.com/hooks',
      events: ['job.succeeded', 'job.failed'],
      status: 'enabled',
      disabled_at: null,
      disabled_reason: null,
      previous_secret_expires_at: null,
      created_at: '2026-01-15T09:30:00.000Z',
    };
    expectSnapshot('webhooks-list', (await cli(['webhooks', 'list'], () => list([endpoint]))).stdout);
  });

  test('a usage error: one line and a hint, not the whole help', async () => {
    const result = await cli(['frobnicate'], () => ({ status: 500 }));
    assert.equal(result.code, 2);
    assert.equal(server?.requests.length, 0);
    expectSnapshot('usage-error', result.stderr);
  });

  test('every command and subcommand answers --help and -h with its own usage, exit 0, no request', async () => {
    const commands = [
      ['convert', 'mediajobs convert <file|url> --to out.mp4'],
      ['audio', 'mediajobs audio <file|url> --lufs'],
      ['estimate', 'mediajobs estimate <sdr2hdr|audio>'],
      ['jobs get', 'mediajobs jobs get <sdr2hdr|audio> <job_id>'],
      ['jobs list', 'mediajobs jobs list <sdr2hdr|audio>'],
      ['jobs cancel', 'mediajobs jobs cancel <sdr2hdr|audio> <job_id>'],
      ['credits', 'mediajobs credits'],
      ['ledger', 'mediajobs ledger [--limit 20]'],
      ['keys list', 'mediajobs keys list'],
      ['keys create', 'mediajobs keys create --scopes'],
      ['keys revoke', 'mediajobs keys revoke <key_id>'],
      ['webhooks list', 'mediajobs webhooks list'],
      ['webhooks deliveries', 'mediajobs webhooks deliveries <we_id>'],
      ['listen', 'mediajobs listen --forward-to'],
    ];
    for (const [command, usage] of commands) {
      for (const flag of ['--help', '-h']) {
        const result = await cli([...command!.split(' '), flag], () => ({ status: 500 }));
        assert.equal(result.code, 0, `${command} ${flag}: ${result.stderr}`);
        assert.equal(result.stderr, '');
        assert.equal(server?.requests.length, 0);
        assert.match(
          result.stdout,
          new RegExp(`^Usage:\\n  ${usage!.replace(/[|[\]]/g, '\\$&')}`),
          `${command} ${flag}`,
        );
      }
    }
    const family = await cli(['jobs', '--help'], () => ({ status: 500 }));
    assert.equal(family.code, 0);
    assert.match(family.stdout, /mediajobs jobs get .*\n.*mediajobs jobs list .*\n.*mediajobs jobs cancel /);
    const top = await cli(['--help'], () => ({ status: 500 }));
    assert.match(top.stdout, /Run 'mediajobs <command> --help' for one command's options\./);
  });
});
