// The worker node as the control plane sees it: registered, Ready, describing itself
// truthfully, and heartbeating through its Lease.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmdirSync, statSync, writeFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { cpus, totalmem } from 'node:os';
import { CertificatesV1Api, KubeConfig } from '@kubernetes/client-node';
import { execFileSync } from 'node:child_process';
import {
  ADMIN_KUBECONFIG,
  ROOT,
  RUNTIME,
  clients,
  ensureStack,
  eventually,
  kubectl,
  nodeName,
  podSpec,
  restartKubelet,
  withNamespace,
  NODE_IP,
} from './stack.ts';

before(() => ensureStack());

test('the kubelet-ts node is registered and Ready', async () => {
  const { core } = clients();
  const node = await eventually('node Ready', 60_000, async () => {
    const n = await core.readNode({ name: nodeName() });
    return n.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True' ? n : undefined;
  });
  const ready = node.status!.conditions!.find((c) => c.type === 'Ready')!;
  assert.equal(ready.reason, 'KubeletReady');
  const info = node.status!.nodeInfo!;
  // containerd 2 reports its tag (v2.2.9), Debian's 1.6 its package version (1.6.20~ds1); the Node shows
  // them as upstream's kubelet prints them, parsed: 2.2.9 and 1.6.20.
  assert.match(info.containerRuntimeVersion, RUNTIME === 'containerd1' ? /^containerd:\/\/1\./ : /^containerd:\/\/2\./);
  assert.equal(info.kubeletVersion, 'v1.36.3');
  assert.equal(info.operatingSystem, 'linux');
  assert.ok(info.bootID && info.machineID !== undefined && info.kernelVersion);
  // cadvisor's systemUUID: DMI's product_uuid, or on a VM without DMI (this one) the machine id.
  const dmi = '/sys/class/dmi/id/product_uuid';
  assert.equal(info.systemUUID, readFileSync(existsSync(dmi) ? dmi : '/etc/machine-id', 'utf8').trim());
  assert.equal(node.status!.addresses!.find((a) => a.type === 'InternalIP')?.address, NODE_IP);
  assert.equal(node.metadata!.labels!['kubernetes.io/hostname'], nodeName());
  assert.equal(node.metadata!.labels!['kubernetes.io/os'], 'linux');
  assert.ok(Number(node.status!.capacity!.pods) > 0, 'capacity lists pods');
  assert.ok(node.spec!.podCIDR, 'the controller-manager gave the node a podCIDR');
  for (const t of ['MemoryPressure', 'DiskPressure', 'PIDPressure']) {
    assert.equal(node.status!.conditions!.find((c) => c.type === t)?.status, 'False', t);
  }
  assert.ok(
    node.status!.images!.some((i) => i.names!.some((n) => n.includes('busybox'))),
    'node images list busybox',
  );
  // The runtime's handlers and what each supports, from CRI Status (upstream's RuntimeHandlers
  // setter): containerd 2 lists the default handler ("") and its runtimes; containerd 1.6 none.
  const handlers = node.status!.runtimeHandlers ?? [];
  if (RUNTIME === 'containerd1') assert.deepEqual(handlers, [], 'containerd 1.6 lists no runtime handlers');
  else
    assert.deepEqual(
      JSON.parse(JSON.stringify(handlers.find((h) => !h.name)?.features ?? null)),
      { recursiveReadOnlyMounts: true, userNamespaces: true },
      'the default runtime handler with recursive read-only mounts and user namespaces',
    );
  // The features the apiserver and scheduler ask of a node before a WebSocket exec, a resize or a
  // RestartAllContainers pod.
  assert.deepEqual(JSON.parse(kubectl('get', 'node', nodeName(), '-o', 'jsonpath={.status.declaredFeatures}')), [
    'ExtendWebSocketsToKubelet',
    'InPlacePodLevelResourcesVerticalScaling',
    'InPlacePodVerticalScalingInitContainers',
    'RestartAllContainersOnContainerExits',
  ]);
});

test('the node Lease is renewed', async () => {
  const { coordination } = clients();
  const first = await coordination.readNamespacedLease({ name: nodeName(), namespace: 'kube-node-lease' });
  assert.equal(first.spec!.holderIdentity, nodeName());
  assert.equal(first.spec!.leaseDurationSeconds, 40);
  assert.equal(first.metadata!.ownerReferences?.[0]?.kind, 'Node');
  const t0 = new Date(first.spec!.renewTime as unknown as string).getTime();
  await eventually(
    'a newer renewTime',
    25_000,
    async () => {
      const l = await coordination.readNamespacedLease({ name: nodeName(), namespace: 'kube-node-lease' });
      return new Date(l.spec!.renewTime as unknown as string).getTime() > t0;
    },
    1000,
  );
});

test('the node got its client certificate by TLS bootstrap: a CSR approved and issued, files as upstream', async () => {
  const kc = new KubeConfig();
  kc.loadFromFile(ADMIN_KUBECONFIG);
  const certs = kc.makeApiClient(CertificatesV1Api);
  const csrs = (await certs.listCertificateSigningRequest()).items.filter(
    (c) => c.spec.signerName === 'kubernetes.io/kube-apiserver-client-kubelet' && c.spec.username?.startsWith('system:bootstrap:'),
  );
  assert.ok(csrs.length > 0, 'a bootstrap CSR exists');
  const csr = csrs.at(-1)!;
  assert.ok(
    csr.status?.conditions?.some((c) => c.type === 'Approved' && c.status === 'True'),
    'approved',
  );
  assert.ok(csr.status?.certificate, 'issued');
  const current = '/var/lib/kubelet/pki/kubelet-client-current.pem';
  assert.match(readlinkSync(current), /^kubelet-client-\d{4}-\d\d-\d\d-\d\d-\d\d-\d\d\.pem$/);
  const cert = new X509Certificate(readFileSync(current));
  assert.match(cert.subject, new RegExp(`CN=system:node:${nodeName()}`));
  assert.match(cert.subject, /O=system:nodes/);
  assert.match(
    readFileSync(`${ROOT}/_output/local/kubelet.kubeconfig`, 'utf8'),
    /client-certificate: \/var\/lib\/kubelet\/pki\/kubelet-client-current.pem/,
  );
});

test('the client certificate is rotated before it expires, through a CSR made with the node identity', async () => {
  // The local stack signs kubelet certificates for 3 minutes (SIGNING_DURATION): rotation falls at 126-162 s.
  const kc = new KubeConfig();
  kc.loadFromFile(ADMIN_KUBECONFIG);
  const certs = kc.makeApiClient(CertificatesV1Api);
  const current = '/var/lib/kubelet/pki/kubelet-client-current.pem';
  const first = new X509Certificate(readFileSync(current));
  const rotated = await eventually(
    'a rotated certificate',
    200_000,
    async () => {
      const c = new X509Certificate(readFileSync(current));
      return c.serialNumber !== first.serialNumber ? c : undefined;
    },
    2000,
  );
  assert.ok(new Date(rotated.validTo) > new Date(first.validTo), 'the new certificate outlives the old one');
  const byNode = (await certs.listCertificateSigningRequest()).items.filter((c) => c.spec.username === `system:node:${nodeName()}`);
  assert.ok(
    byNode.some((c) => c.status?.conditions?.some((x) => x.type === 'Approved')),
    'the renewal CSR was made by the node itself and approved',
  );
  // The kubelet works on with it: its Lease keeps being renewed.
  const { coordination } = clients();
  const t0 = Date.now();
  await eventually(
    'lease renewed after rotation',
    30_000,
    async () => {
      const l = await coordination.readNamespacedLease({ name: nodeName(), namespace: 'kube-node-lease' });
      return new Date(l.spec!.renewTime as unknown as string).getTime() > t0;
    },
    1000,
  );
});

test('the node has its CSINode, owned by its Node, and the plugin registration directory, as upstream sets them up', async () => {
  const node = await clients().core.readNode({ name: nodeName() });
  const csiNode = JSON.parse(kubectl('get', 'csinode', nodeName(), '-o', 'json')) as {
    metadata: { ownerReferences?: { kind: string; name: string; uid: string }[]; annotations?: Record<string, string> };
    spec: { drivers: unknown[] | null };
  };
  assert.deepEqual(
    csiNode.metadata.ownerReferences?.map((o) => [o.kind, o.name, o.uid]),
    [['Node', nodeName(), node.metadata!.uid]],
  );
  assert.ok('storage.alpha.kubernetes.io/migrated-plugins' in (csiNode.metadata.annotations ?? {}), 'the migration annotation is set');
  const rootDir = process.env.KUBELET_ROOT_DIR ?? '/var/lib/kubelet';
  for (const dir of ['plugins_registry', 'plugins']) assert.ok(statSync(`${rootDir}/${dir}`).isDirectory(), `${rootDir}/${dir}`);
});

// Upstream's run(): the kubelet's own oom_score_adj is oomScoreAdj (-999 by default), so that the
// OOM killer takes pods before it. Lowering it takes CAP_SYS_RESOURCE, which this host's
// container lacks: then the kubelet logs why, as upstream, and a raised value shows it applied.
test("the kubelet's own oom_score_adj is oomScoreAdj (-999 by default), or its log says why not", async (t) => {
  const LOG = `${ROOT}/_output/local/logs/kubelet-ts.log`;
  const kubeletAdj = () => {
    try {
      const pid = readFileSync(`${ROOT}/_output/local/pids/kubelet-ts.child.pid`, 'utf8').trim();
      return readFileSync(`/proc/${pid}/oom_score_adj`, 'utf8').trim();
    } catch {
      return undefined; // between restarts
    }
  };
  t.after(() => restartKubelet());
  const from = statSync(LOG).size;
  restartKubelet();
  await eventually('-999, or "Failed to ApplyOOMScoreAdj" in the log', 30_000, async () => {
    const refused = readFileSync(LOG).subarray(from).toString('utf8').includes('Failed to ApplyOOMScoreAdj');
    return kubeletAdj() === '-999' || refused;
  });
  restartKubelet('oomScoreAdj: 500\n');
  await eventually('oom_score_adj 500', 30_000, async () => kubeletAdj() === '500');
});

// Upstream's RunKubelet: the kubelet's RLIMIT_NOFILE is maxOpenFiles (1000000 by default), soft and
// hard. Raising the hard limit past this host's (20000) takes CAP_SYS_RESOURCE: then the log says
// why, as upstream; a lower value takes no privilege and shows it applied.
test("the kubelet's open-files limit is maxOpenFiles (1000000 by default), or its log says why not", async (t) => {
  const LOG = `${ROOT}/_output/local/logs/kubelet-ts.log`;
  const nofile = () => {
    try {
      const pid = readFileSync(`${ROOT}/_output/local/pids/kubelet-ts.child.pid`, 'utf8').trim();
      return /Max open files\s+(\d+)\s+(\d+)/
        .exec(readFileSync(`/proc/${pid}/limits`, 'utf8'))
        ?.slice(1)
        .join(':');
    } catch {
      return undefined; // between restarts
    }
  };
  t.after(() => restartKubelet());
  const from = statSync(LOG).size;
  restartKubelet();
  await eventually('1000000:1000000, or "Failed to set rlimit on max file handles" in the log', 30_000, async () => {
    const refused = readFileSync(LOG).subarray(from).toString('utf8').includes('Failed to set rlimit on max file handles');
    return nofile() === '1000000:1000000' || refused;
  });
  restartKubelet('maxOpenFiles: 4096\n');
  await eventually('4096:4096', 30_000, async () => nofile() === '4096:4096');
});

// Upstream's setupKernelTunables: the node's kernel settings are written at start, or with
// protectKernelDefaults (the CIS benchmark's setting) one that differs refuses the start.
test("kernel settings: the kubelet writes upstream's at start; with protectKernelDefaults one that differs stops it", async (t) => {
  const LOG = `${ROOT}/_output/local/logs/kubelet-ts.log`;
  const sysctl = (name: string) => readFileSync(`/proc/sys/${name}`, 'utf8').trim();
  const names = ['vm/overcommit_memory', 'vm/panic_on_oom', 'kernel/panic', 'kernel/panic_on_oops', 'kernel/keys/root_maxkeys'];
  assert.deepEqual(names.map(sysctl), ['1', '0', '10', '1', '1000000']);
  t.after(() => restartKubelet());
  writeFileSync('/proc/sys/kernel/panic', '0');

  const from = statSync(LOG).size;
  restartKubelet('protectKernelDefaults: true\n');
  const refusal =
    'kubelet-ts: error: Failed to start ContainerManager: invalid kernel flag: kernel/panic, expected value: 10, actual value: 0';
  await eventually('the refusal in the log', 30_000, async () => readFileSync(LOG).subarray(from).toString('utf8').includes(refusal));
  restartKubelet();
  await eventually('kernel/panic written back', 30_000, async () => sysctl('kernel/panic') === '10');
});

// A feature gate upstream's kubelet reads and kubelet-ts does not (src/features/kubelet-gates.ts),
// set away from its default, stops the start with one line naming it, never silently ignored.
test('a feature gate kubelet-ts does not read, set away from its default, stops the start with one line naming it', async (t) => {
  const LOG = `${ROOT}/_output/local/logs/kubelet-ts.log`;
  t.after(() => restartKubelet());
  const from = statSync(LOG).size;
  restartKubelet('featureGates: {PodsAPI: true, PodLevelResources: false, QOSReserved: false}\n');
  const refusal =
    "kubelet-ts: error: feature gates not in effect in kubelet-ts, set away from upstream's defaults: PodLevelResources, PodsAPI (remove them, or set them to their defaults)";
  await eventually('the refusal in the log', 30_000, async () => readFileSync(LOG).subarray(from).toString('utf8').includes(refusal));
});

// kernelMemcgNotification: upstream's memcg notifier is disabled on cgroup v2, so true is accepted
// there; on this cgroup v1 host it needs an eventfd Node.js cannot make, so the start is refused.
test('kernelMemcgNotification: true stops the start on a cgroup v1 host, with one line', async (t) => {
  const LOG = `${ROOT}/_output/local/logs/kubelet-ts.log`;
  const v2 = existsSync('/sys/fs/cgroup/cgroup.controllers');
  t.after(() => restartKubelet());
  const from = statSync(LOG).size;
  restartKubelet('kernelMemcgNotification: true\n');
  if (v2) {
    await eventually('the node Ready', 60_000, async () =>
      (await clients().core.readNode({ name: nodeName() })).status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
    );
    return;
  }
  await eventually('the refusal in the log', 30_000, async () =>
    readFileSync(LOG)
      .subarray(from)
      .toString('utf8')
      .includes('kernelMemcgNotification: true is not supported by kubelet-ts on a cgroup v1 host'),
  );
});

// makeIPTablesUtilChains (true by default): upstream v1.36's kubelet still makes the iptables hint
// chain and, for IPv4, KUBE-FIREWALL with its 127/8 rule, jumped to from INPUT and OUTPUT.
test('makeIPTablesUtilChains: the KUBE-IPTABLES-HINT and KUBE-FIREWALL chains by default, none made with false', async (t) => {
  const iptables = (...args: string[]) => {
    try {
      return execFileSync('iptables', ['-w', '5', ...args], { encoding: 'utf8' });
    } catch {
      return undefined;
    }
  };
  t.after(() => restartKubelet());
  restartKubelet();
  await eventually('the chains', 30_000, async () => iptables('-t', 'mangle', '-S', 'KUBE-IPTABLES-HINT') !== undefined);
  assert.match(iptables('-S', 'KUBE-FIREWALL') ?? '', /-d 127\.0\.0\.0\/8 .*block incoming localnet connections.* -j DROP/);
  assert.match(iptables('-S', 'INPUT') ?? '', /-A INPUT -j KUBE-FIREWALL/);
  assert.match(iptables('-S', 'OUTPUT') ?? '', /-A OUTPUT -j KUBE-FIREWALL/);
  // false: what is gone stays gone (upstream removes nothing either).
  restartKubelet('makeIPTablesUtilChains: false\n');
  iptables('-t', 'mangle', '-X', 'KUBE-IPTABLES-HINT');
  await new Promise((r) => setTimeout(r, 15_000));
  assert.equal(iptables('-t', 'mangle', '-S', 'KUBE-IPTABLES-HINT'), undefined);
});

test("hairpinMode on the kubenet bridge: hairpin_mode on the pod's port (hairpin-veth), neither (none), the bridge promiscuous with the ebtables dedup rules (promiscuous-bridge, the default)", (t) =>
  withNamespace(async (ns) => {
    t.after(() => restartKubelet());
    const conflist = '/etc/cni/net.d/10-kubelet-ts.conflist';
    const bridgeOf = () =>
      (JSON.parse(readFileSync(conflist, 'utf8')) as { plugins: { hairpinMode?: boolean; promiscMode?: boolean }[] }).plugins[0]!;
    // The pod's eth0 names its host end by ifindex (iflink); that port's hairpin_mode on the bridge.
    const portHairpin = (pod: string) => {
      const iflink = kubectl('-n', ns, 'exec', pod, '--', 'cat', '/sys/class/net/eth0/iflink').trim();
      const links = JSON.parse(execFileSync('ip', ['-j', 'link'], { encoding: 'utf8' })) as { ifindex: number; ifname: string }[];
      const veth = links.find((l) => String(l.ifindex) === iflink)!.ifname;
      return readFileSync(`/sys/class/net/${veth}/brport/hairpin_mode`, 'utf8').trim();
    };
    const rows: [string, string | undefined, { hairpinMode: boolean; promiscMode: boolean }, string][] = [
      ['hv', 'hairpin-veth', { hairpinMode: true, promiscMode: false }, '1'],
      ['no', 'none', { hairpinMode: false, promiscMode: false }, '0'],
      ['pb', undefined, { hairpinMode: false, promiscMode: true }, '0'],
    ];
    for (const [name, mode, want, hairpin] of rows) {
      restartKubelet(mode ? `hairpinMode: ${mode}\n` : undefined);
      await eventually(`the conflist for ${mode ?? 'the default'}`, 30_000, async () => {
        const b = bridgeOf();
        return b.hairpinMode === want.hairpinMode && b.promiscMode === want.promiscMode;
      });
      await clients().core.createNamespacedPod({ namespace: ns, body: podSpec(name) });
      await eventually(
        `${name} Running`,
        60_000,
        async () => (await clients().core.readNamespacedPod({ name, namespace: ns })).status?.phase === 'Running',
      );
      assert.equal(portHairpin(name), hairpin, `hairpin_mode of ${name}'s port`);
    }
    // The default: a promiscuous bridge, and kubenet's dedup rules for its MAC within a tick.
    const br = (
      JSON.parse(execFileSync('ip', ['-j', 'link', 'show', 'kts-br0'], { encoding: 'utf8' })) as { flags: string[]; address: string }[]
    )[0]!;
    assert.ok(br.flags.includes('PROMISC'), br.flags.join(','));
    await eventually('the KUBE-DEDUP rules', 20_000, async () => {
      const rules = execFileSync('ebtables', ['-t', 'filter', '-L', 'KUBE-DEDUP'], { encoding: 'utf8' });
      return rules.includes(`-s ${br.address} -o veth+`) && rules.includes('-j DROP');
    });
    assert.match(execFileSync('ebtables', ['-t', 'filter', '-L', 'OUTPUT'], { encoding: 'utf8' }), /-j KUBE-DEDUP/);
  }));

// Deprecated upstream flags a kubeadm node may still carry: pflag's line for each in the log;
// --experimental-allocatable-ignore-eviction leaves the hard eviction threshold (memory.available
// 100Mi here) in allocatable; --log-cadvisor-usage logs cAdvisor's self container's usage once 60
// stats samples are kept, which --housekeeping-interval=1s makes a minute.
test('--experimental-allocatable-ignore-eviction, --housekeeping-interval and --log-cadvisor-usage are in effect', async (t) => {
  const { core } = clients();
  const LOG = `${ROOT}/_output/local/logs/kubelet-ts.log`;
  const memory = async () => {
    const node = await core.readNode({ name: nodeName() });
    return [node.status?.capacity?.memory, node.status?.allocatable?.memory];
  };
  const [capacity, allocatable] = await memory();
  assert.notEqual(allocatable, capacity, 'by default the hard eviction threshold is withheld');
  t.after(() => restartKubelet());
  const from = statSync(LOG).size;
  const started = Date.now();
  restartKubelet(undefined, {
    KTS_KUBELET_FLAGS: '--experimental-allocatable-ignore-eviction --housekeeping-interval=1s --log-cadvisor-usage',
  });
  const log = () => readFileSync(LOG).subarray(from).toString('utf8');
  assert.match(log(), /Flag --experimental-allocatable-ignore-eviction has been deprecated, will be removed in 1\.25 or later\./);
  assert.match(log(), /Flag --log-cadvisor-usage has been deprecated, This is a cadvisor flag /);
  assert.doesNotMatch(log(), /Flag --housekeeping-interval has been deprecated/, 'not deprecated upstream');
  await eventually('allocatable memory = capacity', 30_000, async () => {
    const [c, a] = await memory();
    return c === capacity && a === capacity;
  });
  const usage = /\[(\/[^\]]*)\] (\d+\.\d{3}) cores \(average: (\d+\.\d{3}) cores\), ([\d.]+)(MB|GB) of memory/;
  await eventually("the kubelet's usage line after 60 one-second samples", 120_000, async () => usage.test(log()));
  const [, container, , average, size, unit] = log().match(usage)!;
  assert.ok(Date.now() - started < 110_000, 'samples every second, not every 10 s');
  assert.ok(Number(average) > 0 && Number(average) <= cpus().length, `average cores ${average}`);
  const mb = Number(size) * (unit === 'GB' ? 1000 : 1);
  assert.ok(mb > 20 && mb < totalmem() / 1e6, `memory ${size}${unit}`);
  // cAdvisor's self container: the kubelet's cpu cgroup on cgroup v1, the root on v2.
  const pid = readFileSync(`${ROOT}/_output/local/pids/kubelet-ts.child.pid`, 'utf8').trim();
  const cpuCgroup = readFileSync(`/proc/${pid}/cgroup`, 'utf8')
    .split('\n')
    .find((l) => /^\d+:([^:]*,)?cpu(,[^:]*)?:/.test(l))
    ?.replace(/^\d+:[^:]*:/, '');
  assert.equal(container, existsSync('/sys/fs/cgroup/cgroup.controllers') ? '/' : cpuCgroup);
});

// enforceNodeAllocatable system-reserved (upstream's enforceNodeAllocatableCgroups): the cgroup
// systemReservedCgroup names must be there already (the kubelet makes no reserved cgroup); the
// kubelet holds it to systemReserved and says so on the Node, and refuses its start while a
// hierarchy lacks it, in upstream's words.
test('enforceNodeAllocatable system-reserved: the reserved cgroup held to systemReserved, the start refused while it is missing', async (t) => {
  const LOG = `${ROOT}/_output/local/logs/kubelet-ts.log`;
  const CG = 'kts-system-reserved';
  const v2 = existsSync('/sys/fs/cgroup/cgroup.controllers');
  // Every mounted hierarchy (v1), or the one (v2): where upstream's Validate looks.
  const dirs = v2
    ? [`/sys/fs/cgroup/${CG}`]
    : readdirSync('/sys/fs/cgroup')
        .filter((c) => existsSync(`/sys/fs/cgroup/${c}/cgroup.procs`) && !lstatSync(`/sys/fs/cgroup/${c}`).isSymbolicLink())
        .map((c) => `/sys/fs/cgroup/${c}/${CG}`);
  const removeAll = () => {
    for (const d of dirs) if (existsSync(d)) rmdirSync(d);
  };
  removeAll();
  t.after(() => {
    restartKubelet();
    removeAll();
  });
  const config = `enforceNodeAllocatable: [pods, system-reserved]\nsystemReservedCgroup: /${CG}\nsystemReserved: {cpu: 100m, memory: 100Mi}\n`;
  const from = statSync(LOG).size;
  restartKubelet(config);
  await eventually('the refusal in the log', 30_000, async () =>
    readFileSync(LOG)
      .subarray(from)
      .toString('utf8')
      .includes(
        `kubelet-ts: error: Failed to start ContainerManager: Failed to enforce System Reserved Cgroup Limits on "/${CG}": cgroup ["${CG}"] has some missing ${v2 ? 'controllers' : 'paths'}`,
      ),
  );

  for (const d of dirs) mkdirSync(d, { recursive: true });
  if (v2)
    writeFileSync(
      '/sys/fs/cgroup/cgroup.subtree_control',
      readFileSync('/sys/fs/cgroup/cgroup.controllers', 'utf8')
        .split(/\s+/)
        .filter(Boolean)
        .map((c) => `+${c}`)
        .join(' '),
    );
  const since = Date.now() - 1000;
  restartKubelet(config);
  const { core } = clients();
  const read = (hierarchy: string, file: string) => readFileSync(`/sys/fs/cgroup/${v2 ? '' : `${hierarchy}/`}${CG}/${file}`, 'utf8').trim();
  // 100m as shares (102; cpu.weight 4 on v2), 100Mi as bytes.
  const want = v2 ? ['4', String(100 * 2 ** 20)] : ['102', String(100 * 2 ** 20)];
  await eventually(
    'the reserved cgroup at its limits',
    30_000,
    async () =>
      [read('cpu', v2 ? 'cpu.weight' : 'cpu.shares'), read('memory', v2 ? 'memory.max' : 'memory.limit_in_bytes')].join() === want.join(),
  );
  await eventually('the NodeAllocatableEnforced event on the Node', 30_000, async () =>
    (
      await core.listNamespacedEvent({ namespace: 'default', fieldSelector: `involvedObject.kind=Node,involvedObject.name=${nodeName()}` })
    ).items.some(
      (e) =>
        e.reason === 'NodeAllocatableEnforced' &&
        e.message === `Updated limits on system reserved cgroup /${CG}` &&
        new Date(e.lastTimestamp ?? e.eventTime ?? 0).getTime() >= since,
    ),
  );
});
