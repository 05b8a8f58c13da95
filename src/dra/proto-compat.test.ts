// proto/dra/v1, v1beta1 and dra-health/v1alpha1 are written here, not copied: this proves them wire-compatible with
// k8s.io/kubelet at the pinned release, fetched through the Go module proxy. No go or no proxy is
// a failure, never a skip.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { compare, parse, stagingVersion, upstreamFile, wireDifferences } from '../cri/proto-compare.ts';
import { DRA_HEALTH_PROTO, DRA_V1_PROTO, DRA_V1BETA1_PROTO } from './proto.ts';

const cases = [
  { ours: DRA_V1_PROTO, path: 'pkg/apis/dra/v1/api.proto' },
  { ours: DRA_V1BETA1_PROTO, path: 'pkg/apis/dra/v1beta1/api.proto' },
  { ours: DRA_HEALTH_PROTO, path: 'pkg/apis/dra-health/v1alpha1/api.proto' },
];

for (const c of cases) {
  test(`${c.path} of k8s.io/kubelet matches ours on the wire`, { timeout: 180_000 }, async () => {
    const { version, problems } = await wireDifferences(c.ours, 'k8s.io/kubelet', c.path);
    assert.deepEqual(problems, [], `differences from k8s.io/kubelet@${version} ${c.path}:\n${problems.join('\n')}`);
  });
}

test('the comparison catches a renumbered field and a dropped optional of the DRA API', { timeout: 180_000 }, async () => {
  const upstream = parse(await upstreamFile('k8s.io/kubelet', await stagingVersion(), cases[0]!.path));
  const ours = await readFile(DRA_V1_PROTO, 'utf8');
  for (const line of ['repeated string cdi_device_ids = 4;', 'optional string share_id = 5;']) assert.ok(ours.includes(line), line);
  const mutated = ours
    .replace('repeated string cdi_device_ids = 4;', 'repeated string cdi_device_ids = 6;')
    .replace('optional string share_id = 5;', 'string share_id = 5;');
  assert.deepEqual(compare(parse(mutated), upstream), [
    'field k8s.io.kubelet.pkg.apis.dra.v1.Device.cdi_device_ids: ours repeated string = 6, upstream repeated string = 4',
    'field k8s.io.kubelet.pkg.apis.dra.v1.Device.share_id: ours string = 5, upstream optional string = 5 oneof _share_id',
    'missing oneof k8s.io.kubelet.pkg.apis.dra.v1.Device._share_id: share_id',
  ]);
});
