// The local cluster of kubelet-ts nodes (hack/cluster/up.sh): kubeadm's control plane on
// kts-cp and workers kts-w1.., each node in its own namespaces with its own containerd. Used
// as an operator uses a cluster: kubectl with the admin kubeconfig kubeadm wrote. If it
// cannot come up, the tests FAIL with up.sh's reason.
import { execFileSync, spawnSync } from 'node:child_process';
import { BIN, BUSYBOX, ROOT, daemonsAlive, runHack } from './stack.ts';

export const CLUSTER_KUBECONFIG = `${ROOT}/_output/cluster/admin.conf`;
export const CP = 'kts-cp';
export const WORKERS = ['kts-w1', 'kts-w2'];
export const nodeIP = (node: string) => (node === CP ? '172.30.254.11' : `172.30.254.${11 + Number(node.replace('kts-w', ''))}`);

/**
 * What hack/cluster/up.sh would find with nothing to do: each node's containerd and kubelet
 * alive, the registry they pull from, every Node Ready, and flannel, kube-proxy and CoreDNS
 * rolled out. A second at most, where up.sh's own checks take about a minute.
 */
function clusterUp(): boolean {
  const nodes = [CP, ...WORKERS];
  if (
    !daemonsAlive(
      `${ROOT}/_output/cluster/pids`,
      nodes.flatMap((n) => [`${n}-containerd`, `${n}-kubelet`]),
    )
  )
    return false;
  if (!daemonsAlive(`${ROOT}/_output/local/pids`, ['registry'])) return false;
  try {
    const ready = ck(['get', 'nodes', '-o', 'jsonpath={range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{" "}{end}']);
    if (ready.split(' ').filter((s) => s === 'True').length < nodes.length) return false;
    for (const [ns, what] of [
      ['kube-flannel', 'ds/kube-flannel-ds'],
      ['kube-system', 'ds/kube-proxy'],
      ['kube-system', 'deploy/coredns'],
    ])
      ck(['-n', ns, 'rollout', 'status', what, '--timeout=1s']);
    return true;
  } catch {
    return false;
  }
}

let started = false;
export function ensureCluster(): void {
  if (started) return;
  if (clusterUp()) {
    started = true;
    return;
  }
  // Its progress shows as it goes: under `make e2e` it may first wait minutes for the add-ons'
  // background build, and then takes minutes more to bring three nodes up.
  runHack('cluster/up.sh', 'the local cluster did not come up', 40 * 60_000, true);
  started = true;
}

/** kubectl on the cluster; throws with kubectl's error. input: a manifest on stdin. */
export function ck(args: string[], input?: string): string {
  return execFileSync(`${BIN}/kubectl`, ['--kubeconfig', CLUSTER_KUBECONFIG, ...args], {
    input,
    encoding: 'utf8',
    timeout: 120_000,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

/** kubectl -o json, parsed. */
export function ckJSON<T = any>(...args: string[]): T {
  return JSON.parse(ck([...args, '-o', 'json'])) as T;
}

/** Runs a command in a cluster node's namespaces (hack/cluster/node.sh exec). */
export function inNode(node: string, ...cmd: string[]): string {
  return execFileSync('bash', [`${ROOT}/hack/cluster/node.sh`, 'exec', node, ...cmd], { encoding: 'utf8', timeout: 60_000 });
}

/**
 * hack/cluster/node.sh join NODE: adds the node (kts-sN: a systemd node) and joins it with
 * kubeadm, or starts its kubelet when it was joined before; throws with the script's reason.
 */
export function joinNode(node: string): void {
  const r = spawnSync('bash', [`${ROOT}/hack/cluster/node.sh`, 'join', node], { encoding: 'utf8', timeout: 15 * 60_000 });
  if (r.status !== 0)
    throw new Error(
      `node ${node} did not join (hack/cluster/node.sh join exited ${r.status ?? r.signal}):\n${`${r.stdout}\n${r.stderr}`.trim().split('\n').slice(-15).join('\n')}`,
    );
}

/** hack/cluster/node.sh kubelet NODE start|stop. */
export function nodeKubelet(node: string, action: 'start' | 'stop'): void {
  execFileSync('bash', [`${ROOT}/hack/cluster/node.sh`, 'kubelet', node, action], { stdio: 'ignore', timeout: 90_000 });
}

/**
 * The StatefulSet `db` the storage tests apply: one pod whose claim `data` (16Mi, ReadWriteOnce,
 * of storageClassName, with claimAnnotations) is mounted at /data. The first pod writes its UID
 * there; every pod prints what it finds, so a test sees whether the data outlived a pod.
 */
export function dataStatefulSet(storageClassName: string, claimAnnotations?: Record<string, string>): object {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 'db' },
    spec: {
      serviceName: 'db',
      replicas: 1,
      selector: { matchLabels: { app: 'db' } },
      template: {
        metadata: { labels: { app: 'db' } },
        spec: {
          terminationGracePeriodSeconds: 1,
          containers: [
            {
              name: 'main',
              image: BUSYBOX,
              command: ['sh', '-c', '[ -f /data/first ] || echo $POD_UID > /data/first; cat /data/first; exec sleep 3600'],
              env: [{ name: 'POD_UID', valueFrom: { fieldRef: { fieldPath: 'metadata.uid' } } }],
              volumeMounts: [{ name: 'data', mountPath: '/data' }],
            },
          ],
        },
      },
      volumeClaimTemplates: [
        {
          metadata: { name: 'data', ...(claimAnnotations ? { annotations: claimAnnotations } : {}) },
          spec: { accessModes: ['ReadWriteOnce'], storageClassName, resources: { requests: { storage: '16Mi' } } },
        },
      ],
    },
  };
}
