import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  bitString,
  contextConstructed,
  integer,
  namedBits,
  objectIdentifier,
  octetString,
  sequence,
  setOf,
  time,
  utf8String,
} from './der.ts';

const hex = (b: Buffer) => b.toString('hex');

test('integers are minimal and positive', () => {
  assert.equal(hex(integer(0)), '020100');
  assert.equal(hex(integer(2)), '020102');
  assert.equal(hex(integer(Buffer.from('0000017f', 'hex'))), '0202017f');
  assert.equal(hex(integer(Buffer.from('0080', 'hex'))), '02020080', 'the zero that keeps it positive stays');
  assert.equal(hex(integer(Buffer.from('80', 'hex'))), '02020080', 'a set top bit gets one');
});

test('object identifiers in base 128 (X.690 8.19)', () => {
  assert.equal(hex(objectIdentifier('2.5.4.3')), '0603550403');
  assert.equal(hex(objectIdentifier('1.2.840.113549.1.1.11')), '06092a864886f70d01010b');
  assert.equal(hex(objectIdentifier('1.2.840.10045.4.3.2')), '06082a8648ce3d040302');
});

test('lengths: short form below 128, long form above', () => {
  assert.equal(hex(octetString(Buffer.alloc(127))).slice(0, 4), '047f');
  assert.equal(hex(octetString(Buffer.alloc(128))).slice(0, 6), '048180');
  assert.equal(hex(octetString(Buffer.alloc(300))).slice(0, 8), '0482012c');
  assert.equal(hex(sequence()), '3000');
  assert.equal(hex(contextConstructed(0)), 'a000');
});

test('SET OF sorts its elements; strings and bit strings', () => {
  assert.equal(hex(setOf(utf8String('b'), utf8String('a'))), '31060c01610c0162');
  assert.equal(hex(bitString(Buffer.from('abcd', 'hex'))), '030300abcd');
  // KeyUsage digitalSignature(0), keyEncipherment(2), keyCertSign(5): 10100100, 2 unused bits.
  assert.equal(hex(namedBits([0, 2, 5])), '030202a4');
  assert.equal(hex(namedBits([0])), '03020780');
  assert.equal(hex(namedBits([8])), '0303070080');
});

test('times: UTCTime through 2049, GeneralizedTime from 2050, whole seconds', () => {
  assert.equal(time(new Date('2026-11-22T12:34:56.789Z')).toString('latin1'), '\x17\x0d261122123456Z');
  assert.equal(time(new Date('2049-12-31T23:59:59Z')).toString('latin1'), '\x17\x0d491231235959Z');
  assert.equal(time(new Date('2050-01-01T00:00:00Z')).toString('latin1'), '\x18\x0f20500101000000Z');
});
