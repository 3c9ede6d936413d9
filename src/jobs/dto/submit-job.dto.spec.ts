import fc from 'fast-check';
import { SubmitAudioJobDto, SubmitSdr2HdrJobDto } from './submit-job.dto';
import { acceptedBody, type BodyType } from '../../common/http/accepted-body';
import { createValidationPipe } from '../../common/http/validation';

/** A body as the JSON parser gives it (structuredClone would build its objects in another realm under Jest). */
const parsed = (body: unknown): unknown => (body === undefined ? undefined : JSON.parse(JSON.stringify(body)));

/** The pipe's answer: the value it returns, or the error it throws (as the client would see it). */
async function outcome(fast: boolean, type: BodyType, body: unknown): Promise<unknown> {
  const pipe = createValidationPipe(type, { fast });
  try {
    return { value: await pipe.transform(parsed(body), { type: 'body', metatype: Object }) };
  } catch (error) {
    return { error: JSON.parse(JSON.stringify(error)) as unknown, message: (error as Error).message };
  }
}

/** Mostly a valid value, sometimes a refused one: so that both paths are exercised. */
const mostly = <T, U>(valid: fc.Arbitrary<T>, refused: fc.Arbitrary<U>) =>
  fc.oneof({ arbitrary: valid, weight: 6 }, { arbitrary: refused, weight: 1 });
/** A key the DTO does not declare (or a reserved name), now and then. */
const stray = fc.oneof(
  { arbitrary: fc.constant({}), weight: 12 },
  { arbitrary: fc.constantFrom({ extra: 1 }, { constructor: 'x' }, { other: null }), weight: 1 },
);
const withStray = <T extends object>(record: fc.Arbitrary<T>) =>
  fc.tuple(record, stray).map(([value, extra]) => ({ ...value, ...extra }));

const media = withStray(
  fc.record(
    {
      duration_seconds: mostly(fc.constantFrom(0, 8, 10_000_000), fc.constantFrom(-1, '8', 10_000_001, null)),
      width: mostly(fc.constantFrom(1, 1920), fc.constantFrom(0, 1.5, '1920')),
      height: mostly(fc.constantFrom(1080, 100_000, null), fc.constantFrom(200_000, 0)),
    },
    { requiredKeys: [] },
  ),
);

const input = fc.oneof(
  {
    arbitrary: withStray(
      fc.record(
        {
          source_url: mostly(
            fc.constantFrom('https://media.example.com/a.mp4', 'HTTP://x', null),
            fc.constantFrom('ftp://x', 5),
          ),
          upload_id: mostly(fc.constantFrom('upl_0AbCdEfGh1234567890abcd', null), fc.constantFrom('upl_x', 7)),
          media: mostly(fc.oneof(media, fc.constant(null)), fc.constantFrom('media', [{ duration_seconds: 1 }], 3)),
        },
        { requiredKeys: [] },
      ),
    ),
    weight: 12,
  },
  { arbitrary: fc.constantFrom('input', null, [{ upload_id: 'upl_0AbCdEfGh1234567890abcd' }]), weight: 1 },
);

const output = withStray(
  fc.record(
    {
      resolution: mostly(fc.constantFrom('source', '720p', '1080p', '2160p'), fc.constantFrom('480', 5)),
      peak_nits: mostly(fc.constantFrom(400, 1000, 10000, null), fc.constantFrom(399, 10001, 1000.5, '1000')),
      transfer: mostly(fc.constantFrom('pq', 'hlg', null), fc.constantFrom('PQ', 1)),
      mapping: mostly(fc.constantFrom('reference', 'expand'), fc.constant('other')),
      container: mostly(fc.constantFrom('mp4', 'mov', 'mkv', 'wav', 'flac'), fc.constant('avi')),
      quality: mostly(fc.constantFrom('fast', 'balanced', 'best'), fc.constant('ultra')),
      target_lufs: mostly(fc.constantFrom(-23, -40, -5, -16.5), fc.constantFrom(-41, -4, '-23')),
      package: mostly(fc.constantFrom('file', 'hls', 'hls', null), fc.constantFrom('dash', 1)),
      ladder: mostly(
        fc.oneof(
          fc.array(fc.record({ height: fc.constantFrom(144, 360, 720, 1080, 2160) }), { minLength: 1, maxLength: 3 }),
          fc.constant(null),
        ),
        fc.constantFrom(
          [],
          [{ height: 721 }],
          [1080],
          {},
          [{ height: 720, width: 1 }],
          [{}],
          [null],
          [[{ height: 720 }]],
        ),
      ),
      codecs: mostly(
        fc.constantFrom(['hevc'], ['hevc', 'av1'], ['av1', 'hevc'], null),
        fc.constantFrom(['av1'], 'hevc', []),
      ),
    },
    { requiredKeys: [] },
  ),
);

const body = fc.oneof(
  {
    arbitrary: withStray(
      fc.record(
        {
          inputs: mostly(
            fc.array(input, { minLength: 1, maxLength: 3 }),
            fc.oneof(
              fc.array(input, { minLength: 0, maxLength: 22 }),
              fc.constantFrom('inputs', null, [[{ upload_id: 'upl_0AbCdEfGh1234567890abcd' }]]),
            ),
          ),
          output: mostly(
            fc.oneof(output, fc.constant(null)),
            fc.oneof(fc.constant('1080p'), fc.array(output, { maxLength: 2 })),
          ),
          metadata: mostly(
            fc.oneof(fc.dictionary(fc.string({ maxLength: 45 }), fc.string({ maxLength: 5 })), fc.constant(null)),
            fc.oneof(
              fc.dictionary(fc.string({ maxLength: 5 }), fc.integer()),
              fc.constantFrom({ constructor: 'x', valueOf: 'y' }, { toString: 'z' }, 'metadata', [1, 2]),
            ),
          ),
          region: mostly(fc.constantFrom('local', 'eu-west-1', null), fc.constantFrom('EU', '', 5)),
        },
        { requiredKeys: [] },
      ),
    ),
    weight: 12,
  },
  { arbitrary: fc.constantFrom(null, undefined, 'text', 5, [], [{ inputs: [] }]), weight: 1 },
);

describe('acceptedBody: the validation pipe fast path for job bodies', () => {
  it.each([SubmitSdr2HdrJobDto, SubmitAudioJobDto])(
    '%p: answers exactly as the pipe without it — the same value, or the same error',
    async (type) => {
      let fast = 0;
      await fc.assert(
        fc.asyncProperty(body, async (candidate) => {
          if (acceptedBody(type, parsed(candidate))) fast++;
          expect(await outcome(true, type, candidate)).toStrictEqual(await outcome(false, type, candidate));
        }),
        { numRuns: 1500 },
      );
      // Not a comparison of refusals alone: a good share of the bodies took the fast path.
      expect(fast).toBeGreaterThan(50);
    },
  );

  it('takes the bodies a submit sends (so the fast path is the one used)', () => {
    const bodies = [
      { inputs: [{ upload_id: 'upl_0AbCdEfGh1234567890abcd' }] },
      {
        inputs: [{ source_url: 'https://media.example.com/a.mp4' }, { upload_id: 'upl_0AbCdEfGh1234567890abcd' }],
        output: { resolution: '1080p', peak_nits: 1000, transfer: 'pq', quality: 'best' },
        metadata: { customer_ref: 'A-17', constructor_ref: 'x' },
        region: 'local',
      },
      { inputs: [{ media: { duration_seconds: 8, width: 1920, height: 1080 } }], output: null, metadata: null },
      {
        inputs: [{ upload_id: 'upl_0AbCdEfGh1234567890abcd' }],
        output: { package: 'hls', ladder: [{ height: 1080 }, { height: 720 }], transfer: 'hlg' },
      },
    ];
    for (const candidate of bodies) {
      const accepted = acceptedBody(SubmitSdr2HdrJobDto, parsed(candidate));
      expect(accepted).toBeInstanceOf(SubmitSdr2HdrJobDto);
    }
    expect(
      acceptedBody(SubmitAudioJobDto, {
        inputs: [{ upload_id: 'upl_0AbCdEfGh1234567890abcd' }],
        output: { target_lufs: -23 },
      }),
    ).toBeInstanceOf(SubmitAudioJobDto);
  });

  it('leaves refusals to the pipe', () => {
    expect(acceptedBody(SubmitSdr2HdrJobDto, { inputs: [] })).toBeUndefined();
    expect(acceptedBody(SubmitSdr2HdrJobDto, { inputs: [{ upload_id: 'upl_x' }] })).toBeUndefined();
    expect(
      acceptedBody(SubmitSdr2HdrJobDto, { inputs: [{ upload_id: 'upl_0AbCdEfGh1234567890abcd' }], x: 1 }),
    ).toBeUndefined();
    expect(
      acceptedBody(SubmitSdr2HdrJobDto, {
        inputs: [{ upload_id: 'upl_0AbCdEfGh1234567890abcd' }],
        output: { transfer: 'hlg', peak_nits: 1000 },
      }),
    ).toBeUndefined();
  });
});
