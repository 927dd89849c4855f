// json.RawMessage as opm keeps it: a value's text as written, compacted when written out.
import { describe, expect, it } from 'vitest';
import { goJsonCompact, goRawField, jsonRawElements } from '../src/catalog/go/gojsonraw.js';

describe('JSON values as written', () => {
  it('compacts outside strings only', () => {
    expect(goJsonCompact(' { "a b" : [ 1.50 , "x \\" y" ,\n\t{ } ] } ')).toBe('{"a b":[1.50,"x \\" y",{}]}');
    expect(goJsonCompact('"\\\\"')).toBe('"\\\\"');
  });

  it('finds the elements of an array and the last member of each name, any case', () => {
    const text = ' [ {"type": "a", "value": 4.10}, {"Value": {"k": "}"}, "VALUE": [1 ,2]}, null, "s" ] ';
    const elements = jsonRawElements(text)!;
    expect(elements).toEqual([
      '{"type": "a", "value": 4.10}',
      '{"Value": {"k": "}"}, "VALUE": [1 ,2]}',
      'null',
      '"s"',
    ]);
    expect(goRawField(elements[0]!, 'value')).toBe('4.10');
    expect(goRawField(elements[1]!, 'value')).toBe('[1 ,2]');
    expect(goRawField(elements[2]!, 'value')).toBeUndefined();
    expect(goRawField('{"\\u0076alue": 1e2}', 'value')).toBe('1e2');
    expect(jsonRawElements('{}')).toBeUndefined();
    expect(jsonRawElements('[]')).toEqual([]);
  });
});
