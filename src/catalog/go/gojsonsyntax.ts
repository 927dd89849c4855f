// Go encoding/json's syntax errors, so a broken JSON catalog file gets opm's message:
// "invalid character '}' looking for beginning of object key string". Only called after
// JSON.parse has already failed, so it favours clarity over speed.

export interface GoJsonSyntaxError {
  /** Bytes from `start` up to and including the offending byte (Go's SyntaxError.Offset). */
  offset: number;
  message: string;
}

function quoteChar(c: number): string {
  if (c === 0x27) return "'\\''";
  if (c === 0x22) return `'"'`;
  const s = JSON.stringify(String.fromCharCode(c));
  return `'${s.slice(1, -1)}'`;
}

/** JSON's whitespace: space, tab, line feed, carriage return. */
export function isJsonSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}
const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;
const isHex = (c: number): boolean => isDigit(c) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);

/**
 * Scan one JSON value from `bytes[start]` like Go's scanner. Returns the error Go reports,
 * `unexpected EOF` when the input ends inside the value, or undefined when it is valid.
 */
export function goJsonSyntaxError(bytes: Uint8Array, start: number): GoJsonSyntaxError | undefined {
  type Container = 'object-key' | 'object-value' | 'array';
  const stack: Container[] = [];
  let i = start;
  const fail = (context: string): GoJsonSyntaxError => ({
    offset: i - start + 1,
    message: `invalid character ${quoteChar(bytes[i] as number)} ${context}`,
  });
  const eof = (): GoJsonSyntaxError => ({ offset: i - start, message: 'unexpected EOF' });

  const literal = (word: string): GoJsonSyntaxError | undefined => {
    for (let k = 1; k < word.length; k++) {
      i++;
      if (i >= bytes.length) return eof();
      if (bytes[i] !== word.charCodeAt(k))
        return fail(`in literal ${word} (expecting ${quoteChar(word.charCodeAt(k))})`);
    }
    i++;
    return undefined;
  };

  const number = (): GoJsonSyntaxError | undefined => {
    if (bytes[i] === 0x2d) {
      i++;
      if (i >= bytes.length) return eof();
      if (!isDigit(bytes[i] as number)) return fail('in numeric literal');
    }
    if (bytes[i] === 0x30) i++;
    else while (i < bytes.length && isDigit(bytes[i] as number)) i++;
    if (bytes[i] === 0x2e) {
      i++;
      if (i >= bytes.length) return eof();
      if (!isDigit(bytes[i] as number)) return fail('after decimal point in numeric literal');
      while (i < bytes.length && isDigit(bytes[i] as number)) i++;
    }
    if (bytes[i] === 0x65 || bytes[i] === 0x45) {
      i++;
      if (bytes[i] === 0x2b || bytes[i] === 0x2d) i++;
      if (i >= bytes.length) return eof();
      if (!isDigit(bytes[i] as number)) return fail('in exponent of numeric literal');
      while (i < bytes.length && isDigit(bytes[i] as number)) i++;
    }
    return undefined;
  };

  const string = (): GoJsonSyntaxError | undefined => {
    i++; // opening quote
    for (;;) {
      if (i >= bytes.length) return eof();
      const c = bytes[i] as number;
      if (c === 0x22) {
        i++;
        return undefined;
      }
      if (c === 0x5c) {
        i++;
        if (i >= bytes.length) return eof();
        const e = bytes[i] as number;
        if (e === 0x75) {
          for (let k = 0; k < 4; k++) {
            i++;
            if (i >= bytes.length) return eof();
            if (!isHex(bytes[i] as number)) return fail('in \\u hexadecimal character escape');
          }
        } else if (!'bfnrt\\/"'.includes(String.fromCharCode(e))) {
          return fail('in string escape code');
        }
      } else if (c < 0x20) {
        return fail('in string literal');
      }
      i++;
    }
  };

  // Parse a value, then what may follow it inside its container.
  for (;;) {
    // beginning of a value
    while (i < bytes.length && isJsonSpace(bytes[i] as number)) i++;
    if (i >= bytes.length) return eof();
    let c = bytes[i] as number;
    let err: GoJsonSyntaxError | undefined;
    if (c === 0x7b) {
      i++;
      while (i < bytes.length && isJsonSpace(bytes[i] as number)) i++;
      if (i >= bytes.length) return eof();
      if (bytes[i] === 0x7d) {
        i++;
      } else {
        if (bytes[i] !== 0x22) return fail('looking for beginning of object key string');
        stack.push('object-key');
        err = string();
        if (err) return err;
      }
    } else if (c === 0x5b) {
      i++;
      while (i < bytes.length && isJsonSpace(bytes[i] as number)) i++;
      if (i >= bytes.length) return eof();
      if (bytes[i] === 0x5d) i++;
      else {
        stack.push('array');
        continue;
      }
    } else if (c === 0x22) err = string();
    else if (c === 0x2d || isDigit(c)) err = number();
    else if (c === 0x74) err = literal('true');
    else if (c === 0x66) err = literal('false');
    else if (c === 0x6e) err = literal('null');
    else return fail('looking for beginning of value');
    if (err) return err;

    // end of a value: what its container allows next
    for (;;) {
      if (stack.length === 0) return undefined;
      while (i < bytes.length && isJsonSpace(bytes[i] as number)) i++;
      if (i >= bytes.length) return eof();
      c = bytes[i] as number;
      const top = stack[stack.length - 1];
      if (top === 'object-key') {
        if (c !== 0x3a) return fail('after object key');
        i++;
        stack[stack.length - 1] = 'object-value';
        break; // a value follows
      }
      if (top === 'object-value') {
        if (c === 0x2c) {
          i++;
          while (i < bytes.length && isJsonSpace(bytes[i] as number)) i++;
          if (i >= bytes.length) return eof();
          if (bytes[i] !== 0x22) return fail('looking for beginning of object key string');
          stack[stack.length - 1] = 'object-key';
          err = string();
          if (err) return err;
          continue;
        }
        if (c !== 0x7d) return fail('after object key:value pair');
        i++;
        stack.pop();
        continue;
      }
      // array
      if (c === 0x2c) {
        i++;
        break;
      }
      if (c !== 0x5d) return fail('after array element');
      i++;
      stack.pop();
    }
  }
}
