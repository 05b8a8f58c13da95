// Our proto/k8s is written by hack/tools/kube/kube-proto from the Go types, not copied: this
// proves each message it defines is, field for field, upstream's generated.proto of k8s.io/api
// and k8s.io/apimachinery at the pinned release, fetched through the Go module proxy. No go or no
// proxy is a failure, never a skip.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import protobuf from 'protobufjs';
import { compareMessages, moduleDir, stagingVersion } from '../../cri/proto-compare.ts';
import { K8S_PROTO_DIR, loadRoot, protoFiles } from './schema-gen.ts';

const MODULES = ['k8s.io/apimachinery', 'k8s.io/api'];

const upstream = stagingVersion().then(async (version) => {
  const dirs = await Promise.all(MODULES.map((m) => moduleDir(m, version)));
  // Each of ours, k8s.io/<module path>/types.proto, is upstream's generated.proto of that package.
  const where = (file: string) => {
    const i = MODULES.findIndex((m) => file.startsWith(`${m}/`));
    assert.ok(i >= 0, `${file} is in neither ${MODULES.join(' nor ')}`);
    return join(dirs[i]!, file.slice(MODULES[i]!.length + 1));
  };
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => where(target);
  root.loadSync(
    protoFiles().map((f) => f.replace(/types\.proto$/, 'generated.proto')),
    { keepCase: true },
  );
  root.resolveAll();
  return { version, root };
});
const ours = () => loadRoot(K8S_PROTO_DIR, protoFiles());

test('proto/k8s matches k8s.io/api and k8s.io/apimachinery on the wire', { timeout: 180_000 }, async () => {
  const { version, root } = await upstream;
  const problems = compareMessages(ours(), root);
  assert.deepEqual(problems, [], `differences from the modules @${version}:\n${problems.join('\n')}`);
});

test('the comparison catches a changed field number', { timeout: 180_000 }, async () => {
  const { root } = await upstream;
  const mutated = ours();
  mutated.lookupType('k8s.io.api.coordination.v1.LeaseSpec').fields.holderIdentity!.id = 9;
  const problems = compareMessages(mutated, root);
  assert.equal(problems.length, 1, problems.join('\n'));
  assert.match(problems[0]!, /^field k8s\.io\.api\.coordination\.v1\.LeaseSpec\.holderIdentity: ours \w+ = 9, upstream \w+ = 1$/);
});
