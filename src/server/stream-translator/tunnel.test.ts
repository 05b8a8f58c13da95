import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tunnelledProtocols } from './tunnel.ts';

const rows: [string, string[], string[]][] = [
  ["kubectl's port-forward", ['SPDY/3.1+portforward.k8s.io'], ['portforward.k8s.io']],
  ['mixed with channel protocols', ['portforward.k8s.io', 'SPDY/3.1+portforward.k8s.io', 'v4.channel.k8s.io'], ['portforward.k8s.io']],
  ['not a Kubernetes protocol', ['SPDY/3.1+chat.example.com'], []],
  ['none', [], []],
];
for (const [name, offered, want] of rows) test(`tunnelledProtocols: ${name}`, () => assert.deepEqual(tunnelledProtocols(offered), want));
