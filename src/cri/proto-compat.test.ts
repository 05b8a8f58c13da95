// Our proto/runtime/v1/api.proto is written here, not copied: this proves it is
// wire-compatible with k8s.io/cri-api at the pinned Kubernetes release, fetched
// through the Go module proxy. No go or no proxy is a failure, never a skip.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { CRI_PROTO } from './proto.ts';
import { compare, parse, stagingVersion, stripGogo, upstreamFile } from './proto-compare.ts';

const upstream = stagingVersion().then(async (version) => ({
  version,
  root: parse(stripGogo(await upstreamFile('k8s.io/cri-api', version, 'pkg/apis/runtime/v1/api.proto'))),
}));
const ours = async () => parse(await readFile(CRI_PROTO, 'utf8'));

test('proto/runtime/v1/api.proto matches k8s.io/cri-api on the wire', { timeout: 180_000 }, async () => {
  const { version, root } = await upstream;
  const problems = compare(await ours(), root);
  assert.deepEqual(problems, [], `differences from k8s.io/cri-api@${version}:\n${problems.join('\n')}`);
});

test('the comparison catches a changed field number', { timeout: 180_000 }, async () => {
  const { root } = await upstream;
  const mutated = await ours();
  mutated.lookupType('runtime.v1.KeyValue').fields.value!.id = 7;
  const problems = compare(mutated, root);
  assert.equal(problems.length, 1, problems.join('\n'));
  assert.match(problems[0]!, /^field runtime\.v1\.KeyValue\.value: ours \w+ = 7, upstream \w+ = 2$/);
});
