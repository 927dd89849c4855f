// Go's float formatting, the one home for it: opm's messages print floats with fmt's `%v`,
// and go-yaml writes them with strconv.FormatFloat(f, 'g', -1, 64). Both give the shortest
// digits; they differ only in where the exponent form starts.

/**
 * `verb` 'v': fmt's `%v` (exponent below 1e-4 and from 1e+21). `verb` 'g':
 * strconv.FormatFloat(f, 'g', -1, 64) (exponent below 1e-4 and from 1e+06). The exponent
 * has at least two digits (`1e-05`), as Go writes it.
 */
export function goFormatFloat(f: number, verb: 'v' | 'g'): string {
  if (Number.isNaN(f)) return 'NaN';
  if (!Number.isFinite(f)) return f > 0 ? '+Inf' : '-Inf';
  if (f === 0) return Object.is(f, -0) ? '-0' : '0';
  const [mantissa, exponentText] = f.toExponential().split('e') as [string, string];
  const exponent = Number(exponentText);
  if (exponent < -4 || exponent >= (verb === 'g' ? 6 : 21)) {
    const digits = Math.abs(exponent);
    return `${mantissa}e${exponent < 0 ? '-' : '+'}${digits < 10 ? `0${digits}` : digits}`;
  }
  return String(f);
}
