import { outputSpec, resolveOutput } from '../jobs/output-options';
import type { HdrOutputSpec } from '../media/output-spec';
import { recheckSource, type PricedSource } from './source-recheck';

const limits = { maxDurationSeconds: 5 };
// A 2 s, 90-line source priced at submit: 2 credits at the 720p tier.
const priced: PricedSource = {
  api: 'sdr2hdr',
  sourceType: 'url',
  targetLines: null,
  estimatedCredits: 2,
  width: 160,
  height: 90,
};

describe('recheckSource', () => {
  it('passes the source the submit priced, and a shorter one (settlement charges less)', () => {
    expect(recheckSource(priced, { durationSeconds: 2, width: 160, height: 90 }, limits)).toBeNull();
    expect(recheckSource(priced, { durationSeconds: 1.5, width: 160, height: 90 }, limits)).toBeNull();
    expect(recheckSource(priced, { durationSeconds: 1.2, width: 128, height: 72 }, limits)).toBeNull();
  });

  it('longer than priced → source_changed, naming both prices', () => {
    expect(recheckSource(priced, { durationSeconds: 4, width: 160, height: 90 }, limits)).toEqual({
      ok: false,
      code: 'source_changed',
      message: expect.stringMatching(
        /^The source changed after submit: it now lasts 4 s at 160×90 \(priced: 160×90\) and would cost 4 credits, but 2 were priced/,
      ),
    });
  });

  it('a taller output than priced → source_changed even when it would cost no more (the plan checked the priced height)', () => {
    // Priced: 4 s at 1080p = 8 credits. 1 s at 2160p costs 8 as well, but the plan was checked for 1080p.
    const at1080: PricedSource = { ...priced, estimatedCredits: 8, width: 1920, height: 1080 };
    expect(recheckSource(at1080, { durationSeconds: 1, width: 3840, height: 2160 }, limits)?.code).toBe(
      'source_changed',
    );
    expect(recheckSource(at1080, { durationSeconds: 4, width: 1920, height: 1080 }, limits)).toBeNull();
  });

  it('a wider output than priced → source_changed although its short side is the same (the plan checked the priced pixels)', () => {
    const at1080: PricedSource = { ...priced, estimatedCredits: 8, width: 1920, height: 1080 };
    expect(recheckSource(at1080, { durationSeconds: 1, width: 2560, height: 1080 }, limits)).toMatchObject({
      code: 'source_changed',
      message: expect.stringContaining('at 2560×1080 (priced: 1920×1080)'),
    });
  });

  it('a portrait source is judged on its pixels, as the submit priced it', () => {
    const portrait: PricedSource = { ...priced, estimatedCredits: 8, width: 1080, height: 1920 };
    expect(recheckSource(portrait, { durationSeconds: 4, width: 1080, height: 1920 }, limits)).toBeNull();
    expect(recheckSource(portrait, { durationSeconds: 4, width: 2160, height: 3840 }, limits)?.code).toBe(
      'source_changed',
    );
  });

  it('a requested resolution caps the output: a taller source above it changes nothing', () => {
    const capped: PricedSource = { ...priced, targetLines: 720, estimatedCredits: 2, width: 1920, height: 1080 };
    expect(recheckSource(capped, { durationSeconds: 2, width: 3840, height: 2160 }, limits)).toBeNull();
  });

  it('over MAX_DURATION_SECONDS → duration_exceeded, first, saying the source changed', () => {
    expect(recheckSource(priced, { durationSeconds: 6, width: 160, height: 90 }, limits)).toEqual({
      ok: false,
      code: 'duration_exceeded',
      message:
        'The source changed after submit: it now lasts 6 s; this API accepts at most 5 s. It was not processed and you were not charged.',
    });
    const upload: PricedSource = { ...priced, sourceType: 'upload' };
    expect(recheckSource(upload, { durationSeconds: 6, width: 160, height: 90 }, limits)?.message).toMatch(
      /^The input lasts 6 s/,
    );
  });

  it('audio is priced per started 10 s: 12 s priced 2 credits, 25 s is 3', () => {
    const audio: PricedSource = {
      api: 'audio',
      sourceType: 'url',
      targetLines: null,
      estimatedCredits: 2,
      width: null,
      height: null,
    };
    expect(
      recheckSource(audio, { durationSeconds: 19, width: null, height: null }, { maxDurationSeconds: 60 }),
    ).toBeNull();
    expect(
      recheckSource(audio, { durationSeconds: 25, width: null, height: null }, { maxDurationSeconds: 60 })?.code,
    ).toBe('source_changed');
  });

  it('a package is re-priced per rung: a longer source than its rungs were priced for → source_changed', () => {
    const packageSpec = outputSpec(resolveOutput({ api: 'sdr2hdr', output: { package: 'hls' } }), {
      maxOutputHeight: 2160,
    }) as HdrOutputSpec;
    // 1080p default ladder, 2 s: (2+1+1+1 + 2+1) × 2 = 16 credits.
    const ladder: PricedSource = { ...priced, estimatedCredits: 16, width: 1920, height: 1080, packageSpec };
    expect(recheckSource(ladder, { durationSeconds: 2, width: 1920, height: 1080 }, limits)).toBeNull();
    expect(recheckSource(ladder, { durationSeconds: 3, width: 1920, height: 1080 }, limits)).toMatchObject({
      code: 'source_changed',
      message: expect.stringContaining('would cost 24 credits, but 16 were priced'),
    });
  });
});
