// Go's float formatting (src/catalog/go/gofloat.ts): the values are what Go 1.22 prints,
// fmt.Sprint for 'v' and strconv.FormatFloat(f, 'g', -1, 64) for 'g'.
import { describe, expect, it } from 'vitest';
import { goFormatFloat } from '../src/catalog/go/gofloat.js';

describe('goFormatFloat', () => {
  it('writes %v with the exponent below 1e-4 and from 1e+21, at least two exponent digits', () => {
    const cases: [number, string][] = [
      [0, '0'],
      [-0, '-0'],
      [1.5, '1.5'],
      [0.0001, '0.0001'],
      [0.00001, '1e-05'],
      [1.25e-7, '1.25e-07'],
      [123456789, '123456789'],
      [1e20, '100000000000000000000'],
      [1e21, '1e+21'],
      [-2.5e100, '-2.5e+100'],
      [NaN, 'NaN'],
      [Infinity, '+Inf'],
      [-Infinity, '-Inf'],
    ];
    for (const [f, go] of cases) expect([f, goFormatFloat(f, 'v')]).toEqual([f, go]);
  });

  it("writes strconv's 'g' with the exponent from 1e+06", () => {
    const cases: [number, string][] = [
      [123456, '123456'],
      [1e6, '1e+06'],
      [1234567, '1.234567e+06'],
      [0.0001, '0.0001'],
      [0.00001, '1e-05'],
      [-0, '-0'],
    ];
    for (const [f, go] of cases) expect([f, goFormatFloat(f, 'g')]).toEqual([f, go]);
  });
});
