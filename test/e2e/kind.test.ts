// A kind cluster with kubelet-ts workers (issue 43, docs/kind.md), made and checked as a kind
// user would: `make kind` (hack/kind/up.sh: the unmodified kind on podman, the node images built
// here, manifests/kind/cluster.yaml: the control plane on the upstream kubelet, two kubelet-ts
// workers), then kubectl against it. The workload's image is not preloaded: the nodes pull it
// through the local stack's registry, their mirror (kind's local registry setup). Last, `kind
// delete cluster` (hack/kind/down.sh) must leave nothing of the cluster on the machine.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { BIN, CACHE, ROOT, ensureStack, eventually, pinned, runHack } from './stack.ts';
import { SMOKE, buildConformance, runSmoke } from './smoke.ts';

const CLUSTER = 'kts-e2e';
const KUBECONFIG = `${ROOT}/_output/kind/${CLUSTER}.kubeconfig`;
// hack/kind/lib.sh's names: the scripts read them from the environment.
process.env.KIND_CLUSTER = CLUSTER;
process.env.KIND_KUBECONFIG = KUBECONFIG;
const CONTAINERS_CONF = `${CACHE}/kind-${pinned('KIND_VERSION')}/containers.conf`;

const kk = (args: string[], input?: string) =>
  execFileSync(`${BIN}/kubectl`, ['--kubeconfig', KUBECONFIG, '--request-timeout', '30s', ...args], {
    input,
    encoding: 'utf8',
    timeout: 180_000,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
const kkJSON = <T = any>(...args: string[]): T => JSON.parse(kk([...args, '-o', 'json'])) as T;
/** podman as kind drives it (hack/kind/lib.sh kind_podman). */
const podman = (...args: string[]) =>
  execFileSync('podman', args, { encoding: 'utf8', timeout: 60_000, env: { ...process.env, CONTAINERS_CONF } });

// The image of the workload: agnhost as hack/build-images.sh pushed it to the stack's registry.
const AGNHOST = (() => {
  const tar = readdirSync(`${CACHE}/images`).find((f) => /^e2e-agnhost-[0-9a-f]{16}\.tar$/.test(f));
  assert.ok(tar, `no agnhost image in ${CACHE}/images (make up builds it)`);
  const index = execFileSync('tar', ['-xOf', `${CACHE}/images/${tar}`, 'index.json'], { encoding: 'utf8' });
  return JSON.parse(index).manifests[0].annotations['io.containerd.image.name'] as string;
})();

const ns = 'kts-kind-e2e';
const k = (args: string[], input?: string) => kk(['-n', ns, ...args], input);
let workers: string[] = [];

before(() => {
  // The stack's registry is the nodes' mirror; up.sh builds kind and the node images when missing.
  ensureStack();
  buildConformance();
  runHack('kind/up.sh', 'make kind did not bring a kind cluster up', 20 * 60_000, true);
  workers = kkJSON<{ items: { metadata: { name: string } }[] }>('get', 'nodes', '-l', '!node-role.kubernetes.io/control-plane').items.map(
    (n) => n.metadata.name,
  );
  kk(['create', 'namespace', ns]);
});
// (Safe when the last test deleted it already.)
after(() => runHack('kind/down.sh', 'kind delete cluster failed', 5 * 60_000, true));

test('every node Ready; the workers run kubelet-ts as kind starts a kubelet, the control plane the upstream kubelet', () => {
  type Node = { metadata: { name: string }; spec: { providerID?: string }; status: { conditions: { type: string; status: string }[] } };
  const nodes = kkJSON<{ items: Node[] }>('get', 'nodes').items;
  assert.equal(nodes.length, 3, nodes.map((n) => n.metadata.name).join(' '));
  assert.equal(workers.length, 2);
  for (const n of nodes) {
    assert.equal(n.status.conditions.find((c) => c.type === 'Ready')?.status, 'True', `${n.metadata.name} Ready`);
    // kind's flag, which kubelet-ts puts on the Node as upstream's does.
    assert.equal(n.spec.providerID, `kind://podman/${CLUSTER}/${n.metadata.name}`);
    // What systemd runs as kind's kubelet.service: kubelet-ts is Node running its dist/ (node-image.sh).
    const pid = podman('exec', n.metadata.name, 'systemctl', 'show', '-p', 'MainPID', '--value', 'kubelet').trim();
    const cmd = podman('exec', n.metadata.name, 'cat', `/proc/${pid}/cmdline`).replaceAll('\0', ' ');
    if (workers.includes(n.metadata.name)) assert.match(cmd, /kubelet-ts\/dist\/cli\/main\.js/, `${n.metadata.name}: ${cmd}`);
    else assert.match(cmd, /^\/usr\/bin\/kubelet /, `${n.metadata.name}: ${cmd}`);
  }
});

test('a Deployment spread over the kubelet-ts workers, its image pulled through the registry mirror, answers through its Service by DNS from every node', {
  timeout: 5 * 60_000,
}, async () => {
  const reps = workers.length * 2;
  k(
    ['apply', '-f', '-'],
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'List',
      items: [
        {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: 'echo' },
          spec: {
            replicas: reps,
            selector: { matchLabels: { app: 'echo' } },
            template: {
              metadata: { labels: { app: 'echo' } },
              spec: {
                affinity: {
                  nodeAffinity: {
                    requiredDuringSchedulingIgnoredDuringExecution: {
                      nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: workers }] }],
                    },
                  },
                },
                topologySpreadConstraints: [
                  {
                    maxSkew: 1,
                    topologyKey: 'kubernetes.io/hostname',
                    whenUnsatisfiable: 'DoNotSchedule',
                    labelSelector: { matchLabels: { app: 'echo' } },
                  },
                ],
                containers: [{ name: 'echo', image: AGNHOST, imagePullPolicy: 'Always', args: ['netexec', '--http-port=8080'] }],
              },
            },
          },
        },
        {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name: 'echo' },
          spec: { selector: { app: 'echo' }, ports: [{ port: 80, targetPort: 8080 }] },
        },
        {
          apiVersion: 'apps/v1',
          kind: 'DaemonSet',
          metadata: { name: 'client' },
          spec: {
            selector: { matchLabels: { app: 'client' } },
            template: {
              metadata: { labels: { app: 'client' } },
              spec: { tolerations: [{ operator: 'Exists' }], containers: [{ name: 'c', image: AGNHOST, args: ['pause'] }] },
            },
          },
        },
      ],
    }),
  );
  k(['rollout', 'status', 'deploy/echo', '--timeout=150s']);
  k(['rollout', 'status', 'ds/client', '--timeout=150s']);
  type Pod = { metadata: { name: string }; spec: { nodeName: string } };
  const echo = kkJSON<{ items: Pod[] }>('-n', ns, 'get', 'pods', '-l', 'app=echo').items;
  assert.deepEqual([...new Set(echo.map((p) => p.spec.nodeName))].sort(), [...workers].sort(), 'two replicas on each worker');
  // Pulled (imagePullPolicy Always) on the kubelet-ts workers: only the stack's registry has it.
  const pulled = k(['get', 'events', '--field-selector', 'reason=Pulled', '-o', 'jsonpath={range .items[*]}{.message}{"\\n"}{end}']);
  assert.match(pulled, /Successfully pulled image/, pulled);
  const want = echo.map((p) => p.metadata.name).sort();
  for (const c of kkJSON<{ items: Pod[] }>('-n', ns, 'get', 'pods', '-l', 'app=client').items) {
    await eventually(`every echo replica answering echo.${ns}.svc.cluster.local from ${c.spec.nodeName}`, 60_000, async () => {
      const got = k([
        'exec',
        c.metadata.name,
        '--',
        'sh',
        '-c',
        `for i in $(seq 40); do printf "GET /hostname HTTP/1.0\\r\\n\\r\\n" | nc -w 3 echo.${ns}.svc.cluster.local 80 | tail -1; echo; done`,
      ]);
      const seen = [...new Set(got.split('\n').filter(Boolean))].sort();
      return JSON.stringify(seen) === JSON.stringify(want) || undefined;
    });
  }
});

test('kubectl logs, exec and port-forward reach a pod on a kubelet-ts worker', { timeout: 2 * 60_000 }, async () => {
  const pod = kkJSON<{ items: { metadata: { name: string } }[] }>('-n', ns, 'get', 'pods', '-l', 'app=echo').items[0]!.metadata.name;
  assert.match(k(['logs', pod]), /Started HTTP server on port 8080/);
  assert.equal(k(['exec', pod, '--', 'cat', '/etc/hostname']).trim(), pod);
  const port = 20000 + Math.floor(Math.random() * 10000);
  const pf = spawn(`${BIN}/kubectl`, ['--kubeconfig', KUBECONFIG, '-n', ns, 'port-forward', `pod/${pod}`, `${port}:8080`], {
    stdio: 'ignore',
  });
  try {
    const got = await eventually(
      'an answer through kubectl port-forward',
      20_000,
      async () => {
        const r = await fetch(`http://127.0.0.1:${port}/hostname`, { signal: AbortSignal.timeout(2000) });
        return r.ok ? r.text() : undefined;
      },
      500,
    );
    assert.equal(got, pod);
  } finally {
    pf.kill();
  }
});

test("a StatefulSet on kind's standard StorageClass keeps its data across a pod delete", { timeout: 5 * 60_000 }, () => {
  k(
    ['apply', '-f', '-'],
    JSON.stringify({
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 'data' },
      spec: {
        serviceName: 'data',
        replicas: 1,
        selector: { matchLabels: { app: 'data' } },
        template: {
          metadata: { labels: { app: 'data' } },
          spec: {
            affinity: {
              nodeAffinity: {
                requiredDuringSchedulingIgnoredDuringExecution: {
                  nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: workers }] }],
                },
              },
            },
            containers: [
              {
                name: 'c',
                image: AGNHOST,
                command: ['sh', '-c', 'date +%s%N >> /data/boots; exec sleep 3600'],
                volumeMounts: [{ name: 'd', mountPath: '/data' }],
              },
            ],
          },
        },
        volumeClaimTemplates: [
          { metadata: { name: 'd' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Mi' } } } },
        ],
      },
    }),
  );
  k(['rollout', 'status', 'sts/data', '--timeout=150s']);
  // No storageClassName: kind's default class, which the node image's manifest names standard.
  assert.equal(k(['get', 'pvc', 'd-data-0', '-o', 'jsonpath={.spec.storageClassName}']), 'standard');
  k(['delete', 'pod', 'data-0', '--wait=true']);
  k(['rollout', 'status', 'sts/data', '--timeout=150s']);
  assert.equal(k(['exec', 'data-0', '--', 'sh', '-c', 'wc -l < /data/boots']).trim(), '2', "the second pod read the first one's line");
});

// The conformance smoke of the local cluster (smoke.ts), on the kind cluster: upstream's tests
// with the pods on the kubelet-ts workers, their images pulled through the registry mirror.
test('a slice of the upstream conformance tests passes on the kind cluster', { timeout: 20 * 60_000 }, () =>
  runSmoke('conformance-smoke-kind', SMOKE.kind, { CLUSTER: 'kind' }),
);

test('kind delete cluster leaves no container, cgroup or network of the cluster behind', { timeout: 5 * 60_000 }, () => {
  const ids = podman('ps', '-aq', '--no-trunc', '--filter', `label=io.x-k8s.kind.cluster=${CLUSTER}`).split('\n').filter(Boolean);
  assert.equal(ids.length, 3);
  runHack('kind/down.sh', 'kind delete cluster failed', 5 * 60_000, true);
  assert.equal(podman('ps', '-aq', '--filter', `label=io.x-k8s.kind.cluster=${CLUSTER}`).trim(), '');
  assert.equal(podman('volume', 'ls', '-q', '--filter', `label=io.x-k8s.kind.cluster=${CLUSTER}`).trim(), '');
  const cgroups = readdirSync('/sys/fs/cgroup')
    .flatMap((h) => ids.map((id) => `/sys/fs/cgroup/${h}/libpod_parent/libpod-${id}`))
    .filter(existsSync);
  assert.deepEqual(cgroups, []);
  // The kind network goes with its last cluster.
  assert.doesNotMatch(podman('network', 'ls', '--format', '{{.Name}}'), /^kind$/m);
});
