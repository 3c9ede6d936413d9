import { creditsMicroUsd, fromMicroUsd, toMicroUsd } from './micro-usd';
import { usd } from './billing.service';

describe('micro-dollars', () => {
  it('reads caps and prices exactly, from numbers and from numeric columns’ text', () => {
    expect(toMicroUsd('0.01')).toBe(10_000);
    expect(toMicroUsd(0.01)).toBe(10_000);
    expect(toMicroUsd('0.0060')).toBe(6_000);
    expect(toMicroUsd('10000000.00')).toBe(10_000_000_000_000);
  });

  it('prices credits without rounding to cents: 2 credits at $0.006 are $0.012, above a $0.01 cap', () => {
    expect(usd(2, 0.006)).toBe(0.01); // the display rounding that let the job through
    expect(creditsMicroUsd(2, 0.006)).toBe(12_000);
    expect(creditsMicroUsd(2, '0.0060')).toBeGreaterThan(toMicroUsd('0.01'));
    expect(fromMicroUsd(creditsMicroUsd(2, 0.006))).toBe(0.012);
  });

  it('sums that binary floats get wrong stay exact (0.1 + 0.2)', () => {
    expect(toMicroUsd(0.1) + toMicroUsd(0.2)).toBe(toMicroUsd(0.3));
    expect(creditsMicroUsd(3, '0.1000')).toBe(toMicroUsd('0.30'));
  });
});
