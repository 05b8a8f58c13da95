// proto/pluginregistration/v1 is written here, not copied: this proves it wire-compatible with
// k8s.io/kubelet at the pinned release, fetched through the Go module proxy. No go or no proxy
// is a failure, never a skip.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { compare, parse, stagingVersion, upstreamFile, wireDifferences } from '../cri/proto-compare.ts';
import { PLUGIN_REGISTRATION_PROTO } from './proto.ts';

const UPSTREAM = 'pkg/apis/pluginregistration/v1/api.proto';

test(`${UPSTREAM} of k8s.io/kubelet matches ours on the wire`, { timeout: 180_000 }, async () => {
  const { version, problems } = await wireDifferences(PLUGIN_REGISTRATION_PROTO, 'k8s.io/kubelet', UPSTREAM);
  assert.deepEqual(problems, [], `differences from k8s.io/kubelet@${version} ${UPSTREAM}:\n${problems.join('\n')}`);
});

test('the comparison catches a renumbered field of the registration API', { timeout: 180_000 }, async () => {
  const upstream = parse(await upstreamFile('k8s.io/kubelet', await stagingVersion(), UPSTREAM));
  const ours = await readFile(PLUGIN_REGISTRATION_PROTO, 'utf8');
  assert.ok(ours.includes('bool plugin_registered = 1;'));
  const problems = compare(parse(ours.replace('bool plugin_registered = 1;', 'bool plugin_registered = 3;')), upstream);
  assert.deepEqual(problems, ['field pluginregistration.RegistrationStatus.plugin_registered: ours bool = 3, upstream bool = 1']);
});
