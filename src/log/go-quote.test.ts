import { test } from 'node:test';
import assert from 'node:assert/strict';
import { goQuote } from './go-quote.ts';

test('goQuote as strconv.Quote prints', () => {
  assert.equal(goQuote('a\x01\x7f\u00a0é\u2028<"\\\n'), '"a\\x01\\x7f\\u00a0é\\u2028<\\"\\\\\\n"');
  assert.equal(goQuote('\x07\b\f\r\t\v'), '"\\a\\b\\f\\r\\t\\v"');
  assert.equal(goQuote('\x00'), '"\\x00"');
});
