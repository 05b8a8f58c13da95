import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseVerbosity } from './debug-flags.ts';

test("parseVerbosity: GlogSetter's strconv.ParseUint(val, 10, 32) and its errors, word for word", () => {
  const cases: [string, ReturnType<typeof parseVerbosity>][] = [
    ['4', { v: 4 }],
    ['0', { v: 0 }],
    ['007', { v: 7 }],
    ['4294967295', { v: 4294967295 }],
    ['4294967296', { error: 'strconv.ParseUint: parsing "4294967296": value out of range' }],
    ['', { error: 'strconv.ParseUint: parsing "": invalid syntax' }],
    ['4\n', { error: 'strconv.ParseUint: parsing "4\\n": invalid syntax' }],
    ['-1', { error: 'strconv.ParseUint: parsing "-1": invalid syntax' }],
    ['+1', { error: 'strconv.ParseUint: parsing "+1": invalid syntax' }],
    ['1_0', { error: 'strconv.ParseUint: parsing "1_0": invalid syntax' }],
    ['four', { error: 'strconv.ParseUint: parsing "four": invalid syntax' }],
  ];
  for (const [val, want] of cases) assert.deepEqual(parseVerbosity(val), want, JSON.stringify(val));
});
