// proto/deviceplugin/v1beta1 and proto/podresources/v1 are written here, not copied: this
// proves them wire-compatible with k8s.io/kubelet at the pinned release, fetched through the
// Go module proxy. No go or no proxy is a failure, never a skip.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { compare, parse, stagingVersion, upstreamFile, wireDifferences } from '../cri/proto-compare.ts';
import { DEVICE_PLUGIN_PROTO, POD_RESOURCES_PROTO } from './proto.ts';

const cases = [
  { ours: DEVICE_PLUGIN_PROTO, path: 'pkg/apis/deviceplugin/v1beta1/api.proto' },
  { ours: POD_RESOURCES_PROTO, path: 'pkg/apis/podresources/v1/api.proto' },
];

for (const c of cases) {
  test(`${c.path} of k8s.io/kubelet matches ours on the wire`, { timeout: 180_000 }, async () => {
    const { version, problems } = await wireDifferences(c.ours, 'k8s.io/kubelet', c.path);
    assert.deepEqual(problems, [], `differences from k8s.io/kubelet@${version} ${c.path}:\n${problems.join('\n')}`);
  });
}

test('the comparison catches a renamed field of the device plugin API', { timeout: 180_000 }, async () => {
  const upstream = parse(await upstreamFile('k8s.io/kubelet', await stagingVersion(), cases[0]!.path));
  const mutated = parse(
    (await readFile(DEVICE_PLUGIN_PROTO, 'utf8')).replace('repeated string deviceIDs = 1;', 'repeated string device_ids = 1;'),
  );
  const problems = compare(mutated, upstream);
  assert.equal(problems.length, 2, problems.join('\n'));
});
