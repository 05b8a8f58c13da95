import { test } from 'node:test';
import assert from 'node:assert/strict';
import { grpcTarget } from './endpoint.ts';

test('endpoints become unix:/// targets', () => {
  assert.equal(grpcTarget('unix:///run/containerd/containerd.sock'), 'unix:///run/containerd/containerd.sock');
  assert.equal(grpcTarget('/run/containerd/containerd.sock'), 'unix:///run/containerd/containerd.sock');
  assert.equal(grpcTarget('unix:/run/containerd/containerd.sock'), 'unix:///run/containerd/containerd.sock');
});

test('other endpoints are refused by name', () => {
  assert.throws(() => grpcTarget('tcp://127.0.0.1:2376'), /unsupported container runtime endpoint "tcp:\/\/127.0.0.1:2376"/);
  assert.throws(() => grpcTarget('run/containerd.sock'), /unsupported/);
});
