// Security contexts as a container sees them from inside (`id`, /proc/self/status, /proc/sys)
// and as the pod status shows them: users and groups, runAsNonRoot, capabilities,
// no_new_privs, seccomp, a read-only root, sysctls, and the shared or host pid namespace.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { clients, ensureStack, eventually, kubectl, nodeName, podSpec, withNamespace, BUSYBOX } from './stack.ts';

before(() => ensureStack());

const sh = (name: string, script: string, over: Partial<V1Container> = {}): V1Container => ({
  name,
  image: BUSYBOX,
  command: ['sh', '-c', script],
  ...over,
});

async function readPod(ns: string, name: string): Promise<V1Pod> {
  return clients().core.readNamespacedPod({ name, namespace: ns });
}

/** Runs one script to its end (restartPolicy Never) and returns what it printed. */
async function output(
  ns: string,
  name: string,
  script: string,
  spec: Partial<V1Pod['spec']> = {},
  container: Partial<V1Container> = {},
): Promise<string> {
  await clients().core.createNamespacedPod({
    namespace: ns,
    body: podSpec(name, { restartPolicy: 'Never', containers: [sh('main', script, container)], ...spec }),
  });
  const phase = await eventually(`${name} finished`, 60_000, async () => {
    const p = (await readPod(ns, name)).status?.phase;
    return p === 'Succeeded' || p === 'Failed' ? p : undefined;
  });
  const log = kubectl('-n', ns, 'logs', name);
  assert.equal(phase, 'Succeeded', `${name} failed: ${log}`);
  return log;
}

/** A field of /proc/self/status as the container's shell sees it. */
const status = (field: string) => `grep '^${field}:' /proc/self/status | tr -s ' \\t' ' '`;

test('runAsUser, runAsGroup, fsGroup and supplementalGroups: what `id` shows', () =>
  withNamespace(async (ns) => {
    const id = await output(ns, 'ids', 'id', {
      securityContext: { runAsUser: 1000, runAsGroup: 3000, fsGroup: 2000, supplementalGroups: [4000] },
    });
    assert.match(id, /^uid=1000 gid=3000 /, id);
    const groups = (/groups=(\S+)/.exec(id)?.[1] ?? '').split(',').map((g) => g.replace(/\(.*\)/, ''));
    for (const g of ['2000', '4000']) assert.ok(groups.includes(g), `group ${g} in ${id}`);
    // The container's own runAsUser wins over the pod's.
    assert.equal(
      (await output(ns, 'own-user', 'id -u', { securityContext: { runAsUser: 1000 } }, { securityContext: { runAsUser: 2000 } })).trim(),
      '2000',
    );
  }));

test('runAsNonRoot: a root image gives CreateContainerConfigError; with runAsUser 1000 it runs', () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    await core.createNamespacedPod({ namespace: ns, body: podSpec('rooted', { securityContext: { runAsNonRoot: true } }) });
    const pod = await eventually('CreateContainerConfigError', 30_000, async () => {
      const p = await readPod(ns, 'rooted');
      return p.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'CreateContainerConfigError' ? p : undefined;
    });
    assert.equal(
      pod.status!.containerStatuses![0]!.state!.waiting!.message,
      `container has runAsNonRoot and image will run as root (pod: "rooted_${ns}(${pod.metadata!.uid})", container: main)`,
    );
    assert.equal(pod.status!.phase, 'Pending');
    assert.equal((await output(ns, 'non-root', 'id -u', { securityContext: { runAsNonRoot: true, runAsUser: 1000 } })).trim(), '1000');
  }));

test('capabilities drop ALL and add NET_ADMIN change CapEff; allowPrivilegeEscalation false sets NoNewPrivs', () =>
  withNamespace(async (ns) => {
    const script = `${status('CapEff')}; ${status('NoNewPrivs')}`;
    const [plain, narrowed] = await Promise.all([
      output(ns, 'plain', script),
      output(
        ns,
        'narrowed',
        script,
        {},
        { securityContext: { capabilities: { drop: ['ALL'], add: ['NET_ADMIN'] }, allowPrivilegeEscalation: false } },
      ),
    ]);
    const capEff = (s: string) => /CapEff: ([0-9a-f]+)/.exec(s)?.[1];
    assert.equal(capEff(narrowed), '0000000000001000', `only CAP_NET_ADMIN (bit 12): ${narrowed}`);
    assert.notEqual(capEff(plain), capEff(narrowed), 'the runtime default set differs');
    assert.match(plain, /NoNewPrivs: 0/);
    assert.match(narrowed, /NoNewPrivs: 1/);
  }));

test('seccompProfile: RuntimeDefault filters (Seccomp: 2), Unconfined and the default do not (0)', () =>
  withNamespace(async (ns) => {
    const [runtimeDefault, unconfined, unset, fromPod] = await Promise.all([
      output(ns, 'filtered', status('Seccomp'), {}, { securityContext: { seccompProfile: { type: 'RuntimeDefault' } } }),
      output(ns, 'unconfined', status('Seccomp'), {}, { securityContext: { seccompProfile: { type: 'Unconfined' } } }),
      output(ns, 'unset', status('Seccomp')),
      output(ns, 'from-pod', status('Seccomp'), { securityContext: { seccompProfile: { type: 'RuntimeDefault' } } }),
    ]);
    assert.equal(runtimeDefault.trim(), 'Seccomp: 2');
    assert.equal(unconfined.trim(), 'Seccomp: 0');
    assert.equal(unset.trim(), 'Seccomp: 0', 'no seccompDefault: Unconfined');
    assert.equal(fromPod.trim(), 'Seccomp: 2', 'the pod-level profile applies to its containers');
  }));

test('readOnlyRootFilesystem: a write to / fails, volumes stay writable', () =>
  withNamespace(async (ns) => {
    const out = await output(
      ns,
      'read-only',
      'touch /probe 2>&1; echo "root=$?"; touch /scratch/probe && echo scratch=ok',
      { volumes: [{ name: 'scratch', emptyDir: {} }] },
      { securityContext: { readOnlyRootFilesystem: true }, volumeMounts: [{ name: 'scratch', mountPath: '/scratch' }] },
    );
    assert.match(out, /Read-only file system/);
    assert.match(out, /root=1/);
    assert.match(out, /scratch=ok/);
  }));

test('sysctls: a safe one is set in the pod; an unsafe one fails the pod with SysctlForbidden', () =>
  withNamespace(async (ns) => {
    const range = await output(ns, 'ports', 'cat /proc/sys/net/ipv4/ip_local_port_range', {
      securityContext: { sysctls: [{ name: 'net.ipv4.ip_local_port_range', value: '20000 40000' }] },
    });
    assert.equal(range.trim().split(/\s+/).join(' '), '20000 40000');
    await clients().core.createNamespacedPod({
      namespace: ns,
      body: podSpec('unsafe', { securityContext: { sysctls: [{ name: 'kernel.msgmax', value: '8192' }] } }),
    });
    const st = await eventually('pod Failed', 30_000, async () => {
      const s = (await readPod(ns, 'unsafe')).status;
      return s?.phase === 'Failed' ? s : undefined;
    });
    assert.equal(st.reason, 'SysctlForbidden');
    assert.equal(st.message, 'Pod was rejected: forbidden sysctl: "kernel.msgmax" not allowlisted');
  }));

test('supplementalGroupsPolicy Strict: only the groups the pod names where the runtime says it can; refused where it cannot', () =>
  withNamespace(async (ns) => {
    const node = await clients().core.readNode({ name: nodeName() });
    const strict = { securityContext: { supplementalGroups: [4000], supplementalGroupsPolicy: 'Strict' } } as Partial<V1Pod['spec']>;
    // containerd 2 reports the feature in its status (make test-containerd1's 1.6 does not).
    if ((node.status as { features?: { supplementalGroupsPolicy?: boolean } }).features?.supplementalGroupsPolicy) {
      assert.equal((await output(ns, 'strict', 'id -G', strict)).trim(), '0 4000');
      return;
    }
    await clients().core.createNamespacedPod({ namespace: ns, body: podSpec('strict', strict) });
    const st = await eventually('pod Failed', 30_000, async () => {
      const s = (await readPod(ns, 'strict')).status;
      return s?.phase === 'Failed' ? s : undefined;
    });
    assert.equal(st.reason, 'SupplementalGroupsPolicyNotSupported');
    assert.equal(st.message, 'Pod was rejected: SupplementalGroupsPolicy=Strict is not supported in this node');
  }));

test("shareProcessNamespace: one container sees the other's processes; hostPID sees the host's pid 1", () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    await core.createNamespacedPod({
      namespace: ns,
      body: podSpec('shared', {
        shareProcessNamespace: true,
        containers: [
          sh('app', 'exec sleep 3601'),
          sh('debug', 'until ps | grep -q "[s]leep 3601"; do sleep 0.2; done; echo saw-app; exec sleep 3600'),
        ],
      }),
    });
    await eventually("debug saw the app container's sleep", 40_000, async () =>
      kubectl('-n', ns, 'logs', 'shared', '-c', 'debug').includes('saw-app'),
    );
    // Without it each container is its own pid 1.
    // $$$$: the kubelet's $(VAR) expansion turns $$ into $, as upstream's.
    assert.equal((await output(ns, 'alone', 'echo "pid=$$$$"')).trim(), 'pid=1');
    const host = readFileSync('/proc/1/comm', 'utf8').trim();
    assert.equal((await output(ns, 'host-pid', 'cat /proc/1/comm', { hostPID: true })).trim(), host);
  }));
