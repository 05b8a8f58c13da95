// The local cluster of kubelet-ts nodes (hack/cluster/up.sh): kubeadm's control plane on
// kts-cp and workers kts-w1.., each node in its own namespaces with its own containerd. Used
// as an operator uses a cluster: kubectl with the admin kubeconfig kubeadm wrote. If it
// cannot come up, the tests FAIL with up.sh's reason.
import { execFileSync, spawnSync } from 'node:child_process';
import { BIN, ROOT } from './stack.ts';

export const CLUSTER_KUBECONFIG = `${ROOT}/_output/cluster/admin.conf`;
export const CP = 'kts-cp';
export const WORKERS = ['kts-w1', 'kts-w2'];
export const nodeIP = (node: string) => (node === CP ? '172.30.254.11' : `172.30.254.${11 + Number(node.replace('kts-w', ''))}`);

let started = false;
export function ensureCluster(): void {
  if (started) return;
  const r = spawnSync('bash', [`${ROOT}/hack/cluster/up.sh`], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 40 * 60_000,
  });
  if (r.status !== 0) {
    const tail = `${r.stdout}\n${r.stderr}`.trim().split('\n').slice(-15).join('\n');
    throw new Error(`the local cluster did not come up (hack/cluster/up.sh exited ${r.status ?? r.signal}):\n${tail}`);
  }
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

/** hack/cluster/node.sh kubelet NODE start|stop. */
export function nodeKubelet(node: string, action: 'start' | 'stop'): void {
  execFileSync('bash', [`${ROOT}/hack/cluster/node.sh`, 'kubelet', node, action], { stdio: 'ignore', timeout: 90_000 });
}
