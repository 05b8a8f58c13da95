// A node started as a managed cloud's bootstrap starts it (issue 42). Amazon EKS's nodeadm on
// AL2023 runs the kubelet with --config and a --config-dir of the drop-ins it writes,
// --cloud-provider=external, --node-ip, --hostname-override, --node-labels and the image credential
// provider flags, the providerID in its config; the cloud controller then initialises the Node.
// Here kubelet-ts is such a node beside the stack's own, on a containerd of its own
// (hack/upstream-kubelet.sh with SECOND_KUBELET=kubelet-ts), with those flags. There is no cloud
// controller here, so the Node stays as a cloud's new node is until one runs: tainted uninitialized.
// That node's pod network is its own, so it is also where a dual-stack pod network can be had
// without touching the stack's: an IPv6 range beside its IPv4 podCIDR.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clients, ensureStack, kubectl, NODE_IP, nodeName, podSpec, ROOT, runningPod, withNamespace } from './stack.ts';

const PROVIDER_ID = 'aws:///us-east-2a/i-0123456789abcdef0';
const PLUGIN = join(ROOT, 'test/fixtures/credential-provider/counting-provider');
const dir = mkdtempSync(join(tmpdir(), 'kts-cloud-'));
const dropins = join(dir, 'config.json.d');
const providers = join(dir, 'image-credential-provider');
const second = () => `${nodeName()}-second`;
// The bootstrap's flags, as nodeadm passes them (its --config, --kubeconfig, --node-ip and
// --hostname-override are the script's, for this node's own ports, runtime and name).
const FLAGS = [
  `--config-dir=${dropins}`,
  `--image-credential-provider-bin-dir=${providers}`,
  `--image-credential-provider-config=${providers}/config.json`,
  '--cloud-provider=external',
  '--node-labels=eks.amazonaws.com/nodegroup=kts,eks.amazonaws.com/capacityType=ON_DEMAND',
];
const env = { ...process.env, SECOND_KUBELET: 'kubelet-ts', SECOND_KUBELET_FLAGS: FLAGS.join(' ') };
const script = (verb: string) =>
  execFileSync('bash', [`${ROOT}/hack/upstream-kubelet.sh`, verb], { env, stdio: ['ignore', 'inherit', 'inherit'], timeout: 240_000 });

before(() => {
  ensureStack();
  // nodeadm's drop-in: the providerID and its maxPods, over the config file's.
  mkdirSync(dropins);
  writeFileSync(
    join(dropins, '40-nodeadm.conf'),
    JSON.stringify({ apiVersion: 'kubelet.config.k8s.io/v1beta1', kind: 'KubeletConfiguration', providerID: PROVIDER_ID, maxPods: 29 }),
  );
  // The credential provider as EKS configures ECR's (the plugin here is the tests' own, under that name).
  mkdirSync(providers);
  copyFileSync(PLUGIN, join(providers, 'ecr-credential-provider'));
  chmodSync(join(providers, 'ecr-credential-provider'), 0o755);
  writeFileSync(
    join(providers, 'config.json'),
    JSON.stringify({
      apiVersion: 'kubelet.config.k8s.io/v1',
      kind: 'CredentialProviderConfig',
      providers: [
        {
          name: 'ecr-credential-provider',
          matchImages: ['*.dkr.ecr.*.amazonaws.com', '*.dkr.ecr.*.amazonaws.com.cn'],
          defaultCacheDuration: '12h',
          apiVersion: 'credentialprovider.kubelet.k8s.io/v1',
        },
      ],
    }),
  );
  script('start');
});
after(() => {
  script('stop');
  rmSync(dir, { recursive: true, force: true });
});

test('a managed-cloud bootstrap command line: providerID, the uninitialized taint, the node IP annotation, the drop-in and labels in effect', async () => {
  const { core } = clients();
  const node = await core.readNode({ name: second() });
  assert.equal(node.spec?.providerID, PROVIDER_ID, 'from the --config-dir drop-in');
  assert.ok(
    node.spec?.taints?.some(
      (t) => t.key === 'node.cloudprovider.kubernetes.io/uninitialized' && t.value === 'true' && t.effect === 'NoSchedule',
    ),
    `taints: ${JSON.stringify(node.spec?.taints)}`,
  );
  assert.equal(node.metadata?.annotations?.['alpha.kubernetes.io/provided-node-ip'], NODE_IP);
  assert.ok(
    node.status?.addresses?.some((a) => a.type === 'InternalIP' && a.address === NODE_IP),
    'the node IP until a cloud controller sets them',
  );
  assert.equal(node.metadata?.labels?.['eks.amazonaws.com/nodegroup'], 'kts');
  assert.equal(node.metadata?.labels?.['eks.amazonaws.com/capacityType'], 'ON_DEMAND');
  assert.equal(node.status?.capacity?.pods, '29', "the drop-in's maxPods over the config file's");
  // /configz says what is in effect: the merged configuration.
  const configz = JSON.parse(kubectl('get', '--raw', `/api/v1/nodes/${second()}/proxy/configz`)).kubeletconfig;
  assert.equal(configz.providerID, PROVIDER_ID);
  assert.equal(configz.maxPods, 29);
});

test('the managed-cloud node runs a pod given to it', () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    await core.createNamespacedPod({ namespace: ns, body: podSpec('on-cloud-node', { nodeName: second() }) });
    await runningPod(ns, 'on-cloud-node', 90_000, (p) => !!p.status?.podIP);
  }));

// The second node's bridge with host-local IPAM over two ranges, as a dual-stack cluster's CNI
// has them: containerd reports the second IP as the sandbox's additional IP, and the kubelet puts
// one of each family in status.podIPs, the node's own family (IPv4 here) first.
test('a dual-stack pod shows both its IPs, the IPv4 one first, as the node is IPv4', () =>
  withNamespace(async (ns) => {
    const conflist = `${ROOT}/_output/local/cni-upstream/net.d/10-kubelet-upstream.conflist`;
    const conf = JSON.parse(readFileSync(conflist, 'utf8'));
    const ipam = conf.plugins[0].ipam;
    ipam.ranges.push([{ subnet: 'fd00:10:244:77::/64' }]);
    ipam.routes.push({ dst: '::/0' });
    // Written whole, then renamed: containerd reloads the directory by itself.
    writeFileSync(`${conflist}.tmp`, JSON.stringify(conf));
    renameSync(`${conflist}.tmp`, conflist);
    const { core } = clients();
    await core.createNamespacedPod({ namespace: ns, body: podSpec('dual-stack', { nodeName: second() }) });
    const ips = (await runningPod(ns, 'dual-stack', 90_000, (p) => p.status?.podIPs?.length === 2)).status!;
    assert.match(ips.podIPs![0]!.ip, /^\d+\.\d+\.\d+\.\d+$/);
    assert.match(ips.podIPs![1]!.ip, /^fd00:10:244:77:/);
    assert.equal(ips.podIP, ips.podIPs![0]!.ip);
  }));
