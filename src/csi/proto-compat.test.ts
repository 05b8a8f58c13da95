// proto/csi/v1/csi.proto is written here, not copied: this proves its Identity and Node services,
// and every message they carry, wire-compatible with the CSI spec that the pinned Kubernetes
// release requires (its go.mod), fetched through the Go module proxy. No go or no proxy is a
// failure, never a skip.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { compare, kubeVersion, parse, upstreamFile } from '../cri/proto-compare.ts';
import { CSI_PROTO } from './proto.ts';

const SPEC = 'github.com/container-storage-interface/spec';

const upstream = kubeVersion().then(async (kube) => {
  const goMod = await upstreamFile('k8s.io/kubernetes', kube, 'go.mod');
  const version = new RegExp(`^\\s*${SPEC.replaceAll('.', '\\.')} (v\\S+)`, 'm').exec(goMod)?.[1];
  assert.ok(version, `k8s.io/kubernetes@${kube} go.mod requires no ${SPEC}`);
  return { version, root: parse(await upstreamFile(SPEC, version, 'csi.proto')) };
});
const ours = async () => parse(await readFile(CSI_PROTO, 'utf8'));

test('proto/csi/v1/csi.proto matches the CSI spec on the wire (Identity and Node)', { timeout: 180_000 }, async () => {
  const { version, root } = await upstream;
  const problems = compare(await ours(), root, { subset: true });
  assert.deepEqual(problems, [], `differences from ${SPEC}@${version}:\n${problems.join('\n')}`);
});

test('the comparison catches a changed field number in a nested message', { timeout: 180_000 }, async () => {
  const { root } = await upstream;
  const mutated = await ours();
  mutated.lookupType('csi.v1.VolumeCapability.MountVolume').fields.volume_mount_group!.id = 4;
  const problems = compare(mutated, root, { subset: true });
  assert.deepEqual(problems, ['field csi.v1.VolumeCapability.MountVolume.volume_mount_group: ours string = 4, upstream string = 3']);
});

test('a subset still misses what its services carry', { timeout: 180_000 }, async () => {
  const { root } = await upstream;
  const source = (await readFile(CSI_PROTO, 'utf8')).replace('  int64 limit_bytes = 2;\n', '');
  const problems = compare(parse(source), root, { subset: true });
  assert.deepEqual(problems, ['missing field csi.v1.CapacityRange.limit_bytes: int64 = 2']);
});
