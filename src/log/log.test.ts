import { test } from 'node:test';
import assert from 'node:assert/strict';
import { jsonLine } from './log.ts';

test("jsonLine: component-base's JSON lines (ts in ms, msg, v for info, err as its message)", () => {
  assert.deepEqual(JSON.parse(jsonLine('I', 'kubelet', 'Started kubelet', { node: 'n1', port: 10250 }, 2, 1733190000123.5)), {
    ts: 1733190000123.5,
    caller: 'kubelet',
    msg: 'Started kubelet',
    v: 2,
    node: 'n1',
    port: 10250,
  });
  assert.deepEqual(JSON.parse(jsonLine('E', 'runtime', 'Failed', { err: new Error('boom'), gone: undefined }, 0, 1)), {
    ts: 1,
    caller: 'runtime',
    msg: 'Failed',
    err: 'boom',
  });
});
