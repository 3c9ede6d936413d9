// HDR a colourist would sign (issue 40), measured from outside: jobs submitted through the API, run by a real
// worker, their outputs downloaded and decoded by the test decoder (test/support/hdr-decode.ts: 10-bit
// samples, BT.2100's PQ EOTF or HLG's luminance-based OOTF — never zscale's own conversion, which decodes
// the way it encodes). Each item of the issue: HLG keeps colour (1), MaxCLL never above the mastering peak,
// in every place of the file (2), super-whites keep detail (3), no contours in expanded highlights (4), faces
// stay faces (5), the decoded duration is the end of the last frame (6).
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { readHdrMetadata } from '../../src/media/hdr-metadata';
import { readMediainfoHdr } from '../../src/media/mediainfo';
import { highlightGradientMp4 } from '../fixtures/hdr-scenes';
import { colourChartMp4, sdrMp4 } from '../fixtures/media';
import { call, createAccount, type TestAccount, type TestApi } from '../support/app';
import { BARS, COLORCHECKER, readChart, SKIN, SUPER_WHITES, type ChartReading } from '../support/hdr-chart';
import { decodeLight, deltaEItp, lightLevels, readCodedFrames } from '../support/hdr-decode';
import { readGradient } from '../support/hdr-gradient';
import { upload, waitForJob } from '../support/jobs';
import { startStack } from '../support/worker';

const exec = promisify(execFile);
const REGION = 'colourist';

type Output = { mapping?: 'reference' | 'expand'; transfer?: 'pq' | 'hlg'; peak_nits?: number };
const label = (output: Output) =>
  `${output.mapping ?? 'reference'} ${output.transfer ?? 'pq'}${output.peak_nits ? ` ${output.peak_nits}` : ''}`;

describe('HDR a colourist would sign (issue 40)', () => {
  let stack: Awaited<ReturnType<typeof startStack>>;
  let api: TestApi;
  let account: TestAccount;
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mj-colourist-'));
    stack = await startStack({ REGION, STORAGE_DIR: join(dir, 'store'), WORKER_CONCURRENCY: '2' });
    api = stack.api;
    account = await createAccount(api, { credits: 1000 });
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Submits one sdr2hdr job; the job view and the downloaded output, once it succeeded. */
  async function made(source: string, output: Output): Promise<{ job: any; file: string }> {
    const uploadId = await upload(api, account.apiKey, source);
    const submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: account.apiKey,
      body: { inputs: [{ upload_id: uploadId }], output },
    });
    expect(submitted.status).toBe(202);
    const job = await waitForJob(api, account.apiKey, `/v1/sdr2hdr/jobs/${submitted.body.job_id}`, undefined, 240_000);
    expect({ output, status: job.status }).toEqual({ output, status: 'succeeded' });
    const file = join(dir, `${submitted.body.job_id}.mp4`);
    await writeFile(file, Buffer.from(await (await fetch(job.items[0].output.url)).arrayBuffer()));
    return { job, file };
  }

  const charts = new Map<string, Promise<ChartReading>>();
  /** The chart through `output`, read once per output (several tests look at one). */
  function chart(output: Output): Promise<ChartReading> {
    const key = label(output);
    if (!charts.has(key))
      charts.set(
        key,
        colourChartMp4()
          .then((source) => made(source, output))
          .then(({ file }) => readChart(file, output.transfer ?? 'pq')),
      );
    return charts.get(key)!;
  }

  it.each<Output>([
    { mapping: 'reference', transfer: 'hlg' },
    { mapping: 'expand', transfer: 'hlg' },
    { mapping: 'reference', transfer: 'pq' },
    { mapping: 'expand', transfer: 'pq', peak_nits: 1000 },
  ])(
    "item 1 — %o: 75 %% bars and ColorChecker patches keep the source's chromaticity (Δu′v′ ≤ 0.004)",
    async (output) => {
      const reading = await chart(output);
      const duv = Object.fromEntries([...BARS, ...COLORCHECKER].map((n) => [n, reading.patches.get(n)!.duv]));
      for (const [name, value] of Object.entries(duv))
        expect({ name, duv: value <= 0.004 }).toEqual({ name, duv: true });
      if (output.mapping === 'reference') {
        // At BT.2408's placement (white 203 cd/m²) too: the bars within ΔE_ITP 2 of the source, on average ≤ 1.5.
        const deltas = BARS.map((n) => reading.patches.get(n)!.deltaE);
        expect(Math.max(...deltas)).toBeLessThanOrEqual(2);
        expect(deltas.reduce((sum, d) => sum + d, 0) / deltas.length).toBeLessThanOrEqual(1.5);
      }
    },
    300_000,
  );

  it("item 1 — expand leaves HLG's shadows and dark skin where reference puts them (ΔE_ITP ≤ 1)", async () => {
    const [reference, expand] = await Promise.all([
      chart({ mapping: 'reference', transfer: 'hlg' }),
      chart({ mapping: 'expand', transfer: 'hlg' }),
    ]);
    for (const name of ['dark skin', 'grey 18%', 'foliage']) {
      const [a, b] = [reference, expand].map((r) => r.patches.get(name)!);
      expect({ name, ratio: Math.abs(b.nits / a.nits - 1) < 0.03 }).toEqual({ name, ratio: true });
      expect({ name, deltaE: deltaEItp(a.light, b.light) <= 1 }).toEqual({ name, deltaE: true });
    }
  }, 300_000);

  it.each<Output>([
    { mapping: 'reference', transfer: 'pq' },
    { mapping: 'expand', transfer: 'pq', peak_nits: 1000 },
    { mapping: 'expand', transfer: 'pq', peak_nits: 4000 },
  ])(
    'item 2 — %o on testsrc2: MaxCLL ≤ the mastering peak in the job view, the SEI, the boxes and mediainfo',
    async (output) => {
      const { job, file } = await made(await sdrMp4({ width: 320, height: 180, seconds: 1 }), output);
      const light = job.items[0].output.video.light;
      const peak = output.peak_nits ?? 1000;
      expect(light.mastering_peak_nits).toBe(peak);
      expect(light.max_cll).toBeLessThanOrEqual(peak);
      expect(light.max_fall).toBeLessThanOrEqual(light.max_cll);
      expect(await readHdrMetadata(file)).toEqual({
        levels: { maxCll: light.max_cll, maxFall: light.max_fall },
        peakNits: peak,
      });
      const info = await readMediainfoHdr(file);
      expect(info?.maxCll).toBe(`${light.max_cll} cd/m2`);
      // No x265 settings string keeps its first bound (cll=1000,1000) against the levels written later.
      const { stdout } = await exec('mediainfo', ['--Inform=Video;%Encoded_Library_Settings%', file]);
      expect(/cll=(\d+),(\d+)/.exec(stdout)?.slice(1) ?? [String(light.max_cll), String(light.max_fall)]).toEqual([
        String(light.max_cll),
        String(light.max_fall),
      ]);
      // The picture itself: light limited before the encode, so all but a few edge pixels (4:2:0
      // reconstruction on one-pixel saturated edges) stay within the peak.
      const frames = (await readCodedFrames(file)).map((frame) => decodeLight(frame, 'pq'));
      expect(lightLevels(frames, 0.999).atQuantile).toBeLessThanOrEqual(peak);
    },
    300_000,
  );

  it.each<Output>([
    { mapping: 'expand', transfer: 'pq', peak_nits: 1000 },
    { mapping: 'expand', transfer: 'pq', peak_nits: 4000 },
    { mapping: 'expand', transfer: 'hlg' },
  ])(
    'item 3 — %o: super-whites 235 < 245 < 254 at least 2 %% apart, white ≥ 80 %% of the peak, none above it',
    async (output) => {
      const reading = await chart(output);
      const peak = output.peak_nits ?? 1000;
      const [white, brighter, brightest] = SUPER_WHITES.map((n) => reading.patches.get(n)!.nits);
      expect(white).toBeGreaterThanOrEqual(0.8 * peak);
      expect(brighter / white).toBeGreaterThanOrEqual(1.02);
      expect(brightest / brighter).toBeGreaterThanOrEqual(1.02);
      expect(brightest).toBeLessThanOrEqual(peak * 1.01);
    },
    300_000,
  );

  it.each<Output>([
    { mapping: 'expand', transfer: 'pq', peak_nits: 1000 },
    { mapping: 'expand', transfer: 'pq', peak_nits: 4000 },
    { mapping: 'expand', transfer: 'hlg' },
  ])(
    'item 4 — %o: a smooth highlight gradient (8-bit codes 190–254) shows no contour: no jump between neighbouring columns above 3 10-bit codes',
    async (output) => {
      const { file } = await made(await highlightGradientMp4(), output);
      const gradient = await readGradient(file);
      // Each 8-bit step lands 4–8 10-bit codes apart on the expanded curve; seen as a jump, that is a contour.
      expect({ output, jump: gradient.columnMaxJump <= 3 }).toEqual({ output, jump: true });
      // Whatever smooths the steps leaves no visible grain (0.4–0.9 10-bit codes RMS measured; x265 varies) …
      expect(gradient.noiseRms).toBeLessThanOrEqual(1.5);
      // … and keeps the curve: adjacent codes still climb by the expansion's step on average.
      expect(gradient.codeMaxStep).toBeGreaterThan(3);
    },
    300_000,
  );

  it.each([
    [1000, 1.5],
    [4000, 2],
  ])(
    'item 5 — expand at %i cd/m² keeps dark, light and pale skin within ×%d of their reference light',
    async (peak, limit) => {
      const [reference, expand] = await Promise.all([
        chart({ mapping: 'reference', transfer: 'pq' }),
        chart({ mapping: 'expand', transfer: 'pq', peak_nits: peak }),
      ]);
      for (const name of SKIN) {
        const ratio = expand.patches.get(name)!.nits / reference.patches.get(name)!.nits;
        expect({ name, ratio: ratio <= limit && ratio >= 0.97 }).toEqual({ name, ratio: true });
      }
    },
    300_000,
  );

  it('item 6 — a 3.000 s video-only source (90 frames at 30 fps) reports decoded_duration_seconds 3.000 ± half a frame', async () => {
    const { job } = await made(await sdrMp4({ width: 160, height: 90, seconds: 3, audio: false }), {});
    expect(Math.abs(job.items[0].decoded_duration_seconds - 3)).toBeLessThanOrEqual(1 / 60);
    expect(job.items[0].warnings).toEqual([]);
  }, 300_000);
});
