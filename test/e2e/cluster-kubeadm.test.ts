// kubelet-ts as the kubelet of every node of a kubeadm cluster (hack/cluster/up.sh): the
// control plane as static pods, kube-proxy, CoreDNS and flannel as their users deploy them,
// and workloads across nodes, checked as an operator would with kubectl.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { BUSYBOX, ROOT, eventually } from './stack.ts';
import { CP, WORKERS, ck, ckJSON, ensureCluster, inNode, nodeIP, nodeKubelet } from './cluster.ts';

before(() => ensureCluster());

const ns = `cl-${randomBytes(3).toString('hex')}`;
before(() => {
  ck(['create', 'namespace', ns]);
});
after(() => {
  ck(['delete', 'namespace', ns, '--wait=false']);
});

type Pod = {
  metadata: { name: string; uid: string; deletionTimestamp?: string; annotations?: Record<string, string> };
  spec: { nodeName?: string };
  status: any;
};
const pods = (selector: string, namespace = ns): Pod[] => ckJSON<{ items: Pod[] }>('-n', namespace, 'get', 'pods', '-l', selector).items;
const running = (p: Pod) => p.status.phase === 'Running' && (p.status.containerStatuses ?? []).every((c: any) => c.ready);
const restarts = (p: Pod) => (p.status.containerStatuses ?? []).reduce((n: number, c: any) => n + c.restartCount, 0);
/** A pod's restarts, and for each restarted container how its last instance ended and its last log lines (for a failed run's reader). */
const restartsSaying = (p: Pod, namespace: string) => {
  const said = (p.status.containerStatuses ?? [])
    .filter((c: any) => c.restartCount > 0)
    .map((c: any) => {
      let log: string;
      try {
        log = ck(['-n', namespace, 'logs', p.metadata.name, '-c', c.name, '--previous', '--tail=15']);
      } catch (e) {
        log = `(no previous log: ${(e as Error).message.split('\n')[0]})`;
      }
      return `${c.name}: restartCount ${c.restartCount}, last state ${JSON.stringify(c.lastState)}\n${log}`;
    });
  let kubelet = '';
  if (said.length)
    try {
      const lines = readFileSync(`${ROOT}/_output/cluster/logs/${p.spec.nodeName}-kubelet.log`, 'utf8').split('\n');
      kubelet = `its kubelet's last lines on it:\n${lines
        .filter((l) => l.includes(p.metadata.name))
        .slice(-15)
        .join('\n')}`;
    } catch {
      /* no log to quote */
    }
  return [restarts(p), `${p.metadata.name} on ${p.spec.nodeName} restarts\n${said.join('\n')}\n${kubelet}`] as const;
};
const exec = (pod: string, ...cmd: string[]) => ck(['-n', ns, 'exec', pod, '--', ...cmd]);

/** An HTTP server on 8080 answering with its pod's name (busybox httpd). */
const serverContainer = {
  name: 'web',
  image: BUSYBOX,
  command: ['sh', '-c', 'mkdir -p /www && hostname > /www/index.html && exec httpd -f -p 8080 -h /www'],
  ports: [{ containerPort: 8080 }],
  readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 1 },
};

const apply = (obj: object) => ck(['-n', ns, 'apply', '-f', '-'], JSON.stringify(obj));

// (busybox 1.35's wget crashes with -T: timeouts come from the timeout applet.)
/** A busybox pod on the first worker to run wget and nslookup from. */
async function clientPod() {
  apply({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'client' },
    spec: {
      nodeName: WORKERS[0],
      terminationGracePeriodSeconds: 1,
      containers: [{ name: 'c', image: BUSYBOX, command: ['sleep', '3600'] }],
    },
  });
  await eventually('client running', 60_000, async () => running(ckJSON<Pod>('-n', ns, 'get', 'pod', 'client')));
}

test('every node runs kubelet-ts and is Ready; the control plane, kube-proxy, flannel and CoreDNS run on them without restarts', async () => {
  const nodes = ckJSON<{ items: any[] }>('get', 'nodes').items;
  assert.deepEqual(nodes.map((n) => n.metadata.name).sort(), [CP, ...WORKERS]);
  for (const n of nodes) {
    assert.equal(n.status.conditions.find((c: any) => c.type === 'Ready')?.status, 'True', `${n.metadata.name} Ready`);
    assert.equal(n.status.nodeInfo.kubeletVersion, 'v1.36.3');
    assert.equal(n.status.addresses.find((a: any) => a.type === 'InternalIP')?.address, nodeIP(n.metadata.name));
    // Each node's kubelet keeps its pods below its own cgroup root (kubeadm-flags.env).
    const configz = JSON.parse(ck(['get', '--raw', `/api/v1/nodes/${n.metadata.name}/proxy/configz`]));
    assert.equal(configz.kubeletconfig.cgroupRoot, `/kts-${n.metadata.name}`);
  }
  const cp = nodes.find((n) => n.metadata.name === CP)!;
  assert.ok('node-role.kubernetes.io/control-plane' in cp.metadata.labels);
  assert.ok(cp.spec.taints.some((t: any) => t.key === 'node-role.kubernetes.io/control-plane' && t.effect === 'NoSchedule'));

  for (const c of ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler']) {
    const mirror = ckJSON<Pod>('-n', 'kube-system', 'get', 'pod', `${c}-${CP}`);
    assert.ok(mirror.metadata.annotations?.['kubernetes.io/config.mirror'], `${c} has a mirror pod`);
    assert.ok(running(mirror), `${c} Running and ready`);
  }
  const perNode = (selector: string, namespace: string) => {
    const ps = pods(selector, namespace);
    assert.deepEqual(ps.map((p) => p.spec.nodeName).sort(), [CP, ...WORKERS], `${selector}: one per node`);
    for (const p of ps) {
      assert.ok(running(p), `${p.metadata.name} Running`);
      const [n, why] = restartsSaying(p, namespace);
      assert.equal(n, 0, why);
    }
  };
  perNode('k8s-app=kube-proxy', 'kube-system');
  perNode('app=flannel', 'kube-flannel');
  const dns = pods('k8s-app=kube-dns', 'kube-system');
  assert.equal(dns.length, 2);
  for (const p of dns) {
    assert.ok(running(p), `${p.metadata.name} Running and ready`);
    const [n, why] = restartsSaying(p, 'kube-system');
    assert.equal(n, 0, why);
  }
});

test('a Deployment spreads over both workers; ClusterIP and NodePort Services reach it from a pod on the other worker and from the host', async () => {
  apply({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web' },
    spec: {
      replicas: 4,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: {
          terminationGracePeriodSeconds: 1,
          topologySpreadConstraints: [
            {
              maxSkew: 1,
              topologyKey: 'kubernetes.io/hostname',
              whenUnsatisfiable: 'DoNotSchedule',
              // The tainted control plane is no domain to spread over.
              nodeTaintsPolicy: 'Honor',
              labelSelector: { matchLabels: { app: 'web' } },
            },
          ],
          containers: [serverContainer],
        },
      },
    },
  });
  apply({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'web' },
    spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] },
  });
  apply({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'web-np' },
    spec: { type: 'NodePort', selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] },
  });
  const web = await eventually('4 web pods ready', 120_000, async () => {
    const ps = pods('app=web');
    return ps.length === 4 && ps.every(running) ? ps : undefined;
  });
  const byNode = (n: string) => web.filter((p) => p.spec.nodeName === n).map((p) => p.metadata.name);
  assert.deepEqual(
    WORKERS.map((w) => byNode(w).length),
    [2, 2],
    'two on each worker',
  );

  // A client on kts-w1: through the Service's DNS name and ClusterIP, every backend answers,
  // the two on kts-w2 among them (pod-to-pod across nodes over flannel's vxlan).
  await clientPod();
  const seen = new Set<string>();
  await eventually(
    'every web pod answering through the ClusterIP Service',
    60_000,
    async () => {
      seen.add(exec('client', 'timeout', '5', 'wget', '-qO-', `http://web.${ns}.svc.cluster.local/`).trim());
      return web.every((p) => seen.has(p.metadata.name));
    },
    50,
  );

  const nodePort = ckJSON<any>('-n', ns, 'get', 'service', 'web-np').spec.ports[0].nodePort as number;
  const fromPod = exec('client', 'timeout', '5', 'wget', '-qO-', `http://${nodeIP(WORKERS[1]!)}:${nodePort}/`).trim();
  assert.ok(
    web.some((p) => p.metadata.name === fromPod),
    `NodePort on the other worker answered from a pod: ${fromPod}`,
  );
  const fromHost = await eventually('the NodePort from the host', 30_000, async () => {
    const r = await fetch(`http://${nodeIP(WORKERS[1]!)}:${nodePort}/`, { signal: AbortSignal.timeout(3000) });
    return r.ok ? (await r.text()).trim() : undefined;
  });
  assert.ok(
    web.some((p) => p.metadata.name === fromHost),
    `NodePort from the host: ${fromHost}`,
  );
});

test('DNS: a Service, the kubernetes Service and a pod hostname.subdomain resolve inside pods', async () => {
  apply({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'sub' },
    spec: { clusterIP: 'None', selector: { app: 'named' }, ports: [{ port: 8080 }] },
  });
  apply({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'named', labels: { app: 'named' } },
    spec: { hostname: 'alpha', subdomain: 'sub', nodeName: WORKERS[1], terminationGracePeriodSeconds: 1, containers: [serverContainer] },
  });
  const named = await eventually('named pod ready', 60_000, async () => {
    const p = ckJSON<Pod>('-n', ns, 'get', 'pod', 'named');
    return running(p) ? p : undefined;
  });
  await clientPod();
  const lookup = (name: string) => exec('client', 'nslookup', name);
  assert.match(lookup('kubernetes.default.svc.cluster.local'), /Address:?\s+10\.97\.0\.1\b/);
  const svcIP = ckJSON<any>('-n', ns, 'get', 'service', 'web').spec.clusterIP as string;
  assert.match(lookup(`web.${ns}.svc.cluster.local`), new RegExp(`Address:?\\s+${svcIP.replace(/\./g, '\\.')}\\b`));
  const podIP = named.status.podIP as string;
  await eventually('alpha.sub resolving to the pod', 30_000, async () => lookup(`alpha.sub.${ns}.svc.cluster.local`).includes(podIP));
  // The pod's own view: its hostname and FQDN, as the kubelet set them up.
  assert.equal(exec('named', 'hostname').trim(), 'alpha');
  assert.match(
    exec('named', 'cat', '/etc/hosts'),
    new RegExp(`${podIP.replace(/\./g, '\\.')}\\s+alpha\\.sub\\.${ns}\\.svc\\.cluster\\.local\\s+alpha`),
  );
});

test('pod hostnames as upstream: setHostnameAsFQDN, hostnameOverride, and an FQDN too long for the kernel refused', async () => {
  const sleeper = { name: 'c', image: BUSYBOX, command: ['sleep', '3600'] };
  const pod = (name: string, spec: object) =>
    apply({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name },
      spec: { nodeName: WORKERS[0], terminationGracePeriodSeconds: 1, containers: [sleeper], ...spec },
    });
  pod('fqdn', { hostname: 'beta', subdomain: 'sub', setHostnameAsFQDN: true });
  pod('override', { hostname: 'beta', subdomain: 'sub', hostnameOverride: 'over.example' });
  const long = 'l'.repeat(40);
  pod('toolong', { hostname: long, subdomain: 'sub', setHostnameAsFQDN: true });
  for (const name of ['fqdn', 'override'])
    await eventually(`${name} running`, 60_000, async () => running(ckJSON<Pod>('-n', ns, 'get', 'pod', name)));
  assert.equal(exec('fqdn', 'hostname').trim(), `beta.sub.${ns}.svc.cluster.local`);
  assert.equal(exec('override', 'hostname').trim(), 'over.example');
  assert.match(exec('override', 'cat', '/etc/hosts'), /\sover\.example\n/);
  // The Linux nodename holds 64 characters: the sandbox is refused, the pod stays Pending.
  const event = await eventually('FailedCreatePodSandBox for toolong', 60_000, async () =>
    ckJSON<{ items: { reason: string; message: string }[] }>(
      '-n',
      ns,
      'get',
      'events',
      '--field-selector',
      'involvedObject.name=toolong',
    ).items.find((e) => e.reason === 'FailedCreatePodSandBox'),
  );
  assert.match(event.message, /FQDN .* is too long \(64 characters is the max, \d+ characters requested\)/);
  assert.equal(ckJSON<Pod>('-n', ns, 'get', 'pod', 'toolong').status.phase, 'Pending');
});

test('a hostNetwork pod has the node address and hostname; a hostPort answers on the node address', async () => {
  apply({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'hostnet' },
    spec: {
      hostNetwork: true,
      nodeName: WORKERS[0],
      terminationGracePeriodSeconds: 1,
      containers: [{ name: 'c', image: BUSYBOX, command: ['sleep', '3600'] }],
    },
  });
  apply({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'hostport' },
    spec: {
      nodeName: WORKERS[1],
      terminationGracePeriodSeconds: 1,
      containers: [{ ...serverContainer, ports: [{ containerPort: 8080, hostPort: 18080 }] }],
    },
  });
  const hostnet = await eventually('hostnet running', 60_000, async () => {
    const p = ckJSON<Pod>('-n', ns, 'get', 'pod', 'hostnet');
    return running(p) ? p : undefined;
  });
  assert.equal(hostnet.status.podIP, nodeIP(WORKERS[0]!));
  assert.equal(exec('hostnet', 'hostname').trim(), WORKERS[0]);
  await eventually('hostport ready', 60_000, async () => running(ckJSON<Pod>('-n', ns, 'get', 'pod', 'hostport')));
  const body = await eventually('the hostPort from the host', 30_000, async () => {
    const r = await fetch(`http://${nodeIP(WORKERS[1]!)}:18080/`, { signal: AbortSignal.timeout(3000) });
    return r.ok ? (await r.text()).trim() : undefined;
  });
  assert.equal(body, 'hostport');
});

test('control plane static pods: deleting the kube-scheduler mirror changes nothing; an edited kube-apiserver manifest restarts it and the cluster recovers', async () => {
  const sched = `kube-scheduler-${CP}`;
  const before = ckJSON<Pod>('-n', 'kube-system', 'get', 'pod', sched);
  const containerID = before.status.containerStatuses[0].containerID;
  ck(['-n', 'kube-system', 'delete', 'pod', sched, '--wait=false']);
  const after = await eventually('a new kube-scheduler mirror', 60_000, async () => {
    const p = ckJSON<Pod>('-n', 'kube-system', 'get', 'pod', sched);
    return p.metadata.uid !== before.metadata.uid && running(p) ? p : undefined;
  });
  assert.equal(after.status.containerStatuses[0].containerID, containerID, 'the scheduler itself kept running');
  assert.equal(restarts(after), restarts(before));

  const api = `kube-apiserver-${CP}`;
  const oldHash = ckJSON<Pod>('-n', 'kube-system', 'get', 'pod', api).metadata.annotations!['kubernetes.io/config.hash'];
  // An operator's edit: one more flag (a new config hash, so a new pod).
  inNode(
    CP,
    'sed',
    '-i',
    `s#^    - --allow-privileged=true$#    - --allow-privileged=true\\n    - --event-ttl=1h0m${Date.now() % 50}s#`,
    '/etc/kubernetes/manifests/kube-apiserver.yaml',
  );
  const restarted = await eventually(
    'the kube-apiserver mirror with the new manifest, running',
    240_000,
    async () => {
      const p = ckJSON<Pod>('-n', 'kube-system', 'get', 'pod', api);
      return p.metadata.annotations!['kubernetes.io/config.hash'] !== oldHash && running(p) ? p : undefined;
    },
    2000,
  );
  assert.ok(restarted);
  // The cluster works again: a pod is scheduled and runs.
  apply({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'after-edit' },
    spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'c', image: BUSYBOX, command: ['sleep', '3600'] }] },
  });
  await eventually(
    'a pod running after the apiserver restart',
    120_000,
    async () => running(ckJSON<Pod>('-n', ns, 'get', 'pod', 'after-edit')),
    1000,
  );
});

test('a worker whose kubelet stops goes NotReady, its pods are evicted after their tolerations and run on the other worker; drain and uncordon', async () => {
  const [keep, lose] = WORKERS as [string, string];
  // Tolerations of 5 s instead of the default 300 s, so the test sees the eviction soon.
  const tolerations = ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable'].map((key) => ({
    key,
    operator: 'Exists',
    effect: 'NoExecute',
    tolerationSeconds: 5,
  }));
  // Made while the other worker is cordoned, so both pods start on `lose`.
  ck(['cordon', keep]);
  try {
    apply({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'mover' },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'mover' } },
        template: {
          metadata: { labels: { app: 'mover' } },
          spec: { terminationGracePeriodSeconds: 1, tolerations, containers: [{ name: 'c', image: BUSYBOX, command: ['sleep', '3600'] }] },
        },
      },
    });
    await eventually(`2 mover pods running on ${lose}`, 60_000, async () => {
      const ps = pods('app=mover');
      return ps.length === 2 && ps.every((p) => running(p) && p.spec.nodeName === lose);
    });
  } finally {
    ck(['uncordon', keep]);
  }

  nodeKubelet(lose, 'stop');
  try {
    await eventually(
      `${lose} not Ready`,
      120_000,
      async () => {
        const n = ckJSON<any>('get', 'node', lose);
        return n.status.conditions.find((c: any) => c.type === 'Ready')?.status !== 'True';
      },
      2000,
    );
    await eventually(
      `the mover pods running on ${keep}`,
      120_000,
      async () => {
        const ps = pods('app=mover').filter((p) => !p.metadata.deletionTimestamp && p.spec.nodeName === keep);
        return ps.length === 2 && ps.every(running);
      },
      2000,
    );
  } finally {
    nodeKubelet(lose, 'start');
  }
  await eventually(
    `${lose} Ready again`,
    120_000,
    async () => {
      const n = ckJSON<any>('get', 'node', lose);
      return n.status.conditions.find((c: any) => c.type === 'Ready')?.status === 'True';
    },
    2000,
  );

  // Drain the worker that now has the pods: they move back to the other one; uncordon undoes it.
  ck(['drain', keep, '--ignore-daemonsets', '--delete-emptydir-data', '--pod-selector=app=mover', '--timeout=120s']);
  try {
    assert.equal(ckJSON<any>('get', 'node', keep).spec.unschedulable, true);
    await eventually(
      `the mover pods running on ${lose} after the drain`,
      120_000,
      async () => {
        const ps = pods('app=mover');
        return ps.length === 2 && ps.every((p) => running(p) && p.spec.nodeName === lose);
      },
      1000,
    );
  } finally {
    ck(['uncordon', keep]);
  }
  assert.equal(ckJSON<any>('get', 'node', keep).spec.unschedulable, undefined);
});
