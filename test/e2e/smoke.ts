// The conformance smoke: a slice of the pinned release's conformance tests run by
// hack/conformance.sh, checked from its JUnit report; conformance-smoke.test.ts runs it on the
// local cluster, cluster-systemd.test.ts on its systemd node, kind.test.ts on kind.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { ROOT } from './stack.ts';
import { parseJUnit } from '../conformance/report.ts';

/** e2e.test and the rest built, outside a test's time limit (under `make e2e` this waits for its background build). */
export function buildConformance(): void {
  const r = spawnSync('bash', [`${ROOT}/hack/conformance.sh`], { stdio: 'inherit', env: { ...process.env, BUILD_ONLY: '1' } });
  assert.equal(r.status, 0, 'hack/conformance.sh could not build the conformance tests (BUILD_ONLY=1): see the lines above');
}

/** What a node runs: pods, containers, hooks, volumes, security contexts, image volumes. */
const NODE = [
  '\\[sig-node\\] Pods should be submitted and removed',
  '\\[sig-node\\] InitContainer \\[NodeConformance\\] should invoke init containers on a RestartNever pod',
  '\\[sig-node\\] Container Lifecycle Hook when create a pod with lifecycle hook should execute poststart exec hook properly',
  '\\[sig-node\\] Downward API should provide pod name, namespace and IP address as env vars',
  '\\[sig-storage\\] Projected configMap should be consumable from pods in volume \\[NodeConformance\\]',
  '\\[sig-node\\] Security Context When creating a container with runAsUser should run the container with uid 65534',
  '\\[sig-node\\] Ephemeral Containers \\[NodeConformance\\] will start an ephemeral container in an existing pod',
  '\\[sig-node\\] Kubelet when scheduling a read only busybox container should not write to root filesystem',
  '\\[sig-node\\] Secrets should be consumable as environment variable names variable names with various prefixes',
  // An image volume pulled with pullPolicy Always, from the cluster's registry (hack/registry.sh).
  '\\[sig-node\\] ImageVolume should succeed with pod and pull policy of Always',
];
// DRA: upstream's test driver served from e2e.test through the hostpathplugin proxy pods
// (csi-driver-host-path's, hack/build-csi.sh): prepared claims' CDI devices, and device health.
const DRA = [
  '\\[sig-node\\] \\[DRA\\] kubelet \\[Feature:DynamicResourceAllocation\\] must map configs and devices to the right containers',
  '\\[sig-node\\] \\[DRA\\] kubelet \\[Feature:DynamicResourceAllocation\\] should report device health with custom messages',
];
// Across nodes: Services through kube-proxy, CoreDNS, the apiserver's proxy to pods, logs, rollouts.
const DNS = '\\[sig-network\\] DNS should provide DNS for services';
const CLUSTER = [
  DNS,
  '\\[sig-network\\] Services should be able to create a functioning NodePort service',
  '\\[sig-network\\] Services should serve multiport endpoints from pods',
  '\\[sig-network\\] Proxy version v1 should proxy through a service and a pod',
  '\\[sig-cli\\] Kubectl logs logs should be able to retrieve and filter logs',
  '\\[sig-apps\\] Deployment RollingUpdateDeployment should delete old pods and create new ones',
];

/**
 * The slices: the local cluster's is the whole smoke. Elsewhere only what that cluster adds is run
 * again (each slice is a minute or more of CI): kind's leaves DRA to the local cluster (kind adds
 * nothing to it); the systemd node's, the only worker, runs the node's tests and one Service by
 * DNS through it.
 */
export const SMOKE = { local: [...NODE, ...DRA, ...CLUSTER], kind: [...NODE, ...CLUSTER], systemd: [...NODE, DNS] };

/**
 * Runs a slice of the smoke against the local cluster (or, with env CLUSTER=kind, a kind cluster); fails
 * naming each failed test, or a test that did not run once.
 */
export function runSmoke(name: string, tests: string[], env: Record<string, string> = {}): void {
  const out = `${ROOT}/_output/${name}`;
  const r = spawnSync('bash', [`${ROOT}/hack/conformance.sh`], {
    encoding: 'utf8',
    timeout: 20 * 60_000,
    env: { ...process.env, ...env, FOCUS: tests.join('|'), SKIP: '\\[Serial\\]|\\[Disruptive\\]', PROCS: '4', CONFORMANCE_OUT: out },
  });
  const tail = () => `${r.stdout ?? ''}\n${r.stderr ?? ''}`.trim().split('\n').slice(-10).join('\n');
  assert.ok(existsSync(`${out}/junit.xml`), `hack/conformance.sh wrote no JUnit report (exit ${r.status}):\n${tail()}`);
  const cases = parseJUnit(readFileSync(`${out}/junit.xml`, 'utf8')).filter(
    (c) => c.outcome !== 'skipped' && !/^\[(Synchronized|Report)/.test(c.name),
  );
  const failed = cases.filter((c) => c.outcome === 'failed').map((c) => `${c.name}: ${c.message.split('\n')[0]}`);
  assert.deepEqual(failed, [], `conformance failures (log: ${out}/e2e.log)`);
  assert.equal(cases.length, tests.length, `each selected test ran once: ${cases.map((c) => c.name).join('; ')}`);
  assert.equal(r.status, 0, `hack/conformance.sh exited ${r.status}:\n${tail()}`);
}
