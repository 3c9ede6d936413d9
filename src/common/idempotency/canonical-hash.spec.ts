import { canonicalJson, requestHash } from './canonical-hash';

describe('canonical request hash', () => {
  it('ignores key order at every depth', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[1,{"x":1,"y":2}]},"b":1}',
    );
    expect(requestHash('POST', '/v1/x', { a: 1, b: 2 })).toBe(requestHash('POST', '/v1/x', { b: 2, a: 1 }));
  });

  it('differs when the body, the path or the method differs', () => {
    const base = requestHash('POST', '/v1/sdr2hdr/jobs', { inputs: [1] });
    expect(requestHash('POST', '/v1/sdr2hdr/jobs', { inputs: [2] })).not.toBe(base);
    expect(requestHash('POST', '/v1/audio/jobs', { inputs: [1] })).not.toBe(base);
    expect(requestHash('PUT', '/v1/sdr2hdr/jobs', { inputs: [1] })).not.toBe(base);
  });
});
