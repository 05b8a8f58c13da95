// What each hollow node of a process is: its name, directories, ports, kubeconfig and pod IP
// range, from the command line. Pure, so the table test shows that no two nodes share a port, a
// directory or an address.
import { join } from 'node:path';

export interface HollowArgs {
  nodes: number;
  /** Node i is `${prefix}${first + i}`. */
  namePrefix: string;
  first: number;
  /** Holds NAME.kubeconfig for every node (its client certificate: CN system:node:NAME, O system:nodes). */
  kubeconfigDir: string;
  /** Each node's root directory is ROOT/NAME. */
  rootDir: string;
  /** Node i serves on basePort + 2i (the kubelet API) and basePort + 2i + 1 (healthz). */
  basePort: number;
  /** Extra labels on every node, k=v,... */
  labels: Record<string, string>;
  /** Nodes started at once. */
  startConcurrency: number;
  /** The KubeletConfiguration's contentType to the apiserver, when given (the benchmarks compare JSON with the protobuf default). */
  contentType?: string;
}

export interface HollowNodePlan {
  index: number;
  name: string;
  rootDir: string;
  kubeconfig: string;
  socket: string;
  port: number;
  healthzPort: number;
  /** The /24 the node's pods get their IPs from: 10.(64 + i/256).(i%256).0/24. */
  podIP: (n: number) => string;
  /** The KubeletConfiguration document (kubemark's GetHollowKubeletConfig's choices where they apply). */
  config: Record<string, unknown>;
  labels: Record<string, string>;
}

/** The label every hollow kubelet-ts node carries (benchmarks select on it). */
export const HOLLOW_LABEL = 'hollow.kubelet-ts.dev/kind';

/** Pure: the plan of node `index` (0-based within this process). */
export function nodePlan(a: HollowArgs, index: number): HollowNodePlan {
  const n = a.first + index;
  const name = `${a.namePrefix}${n}`;
  const rootDir = join(a.rootDir, name);
  const port = a.basePort + 2 * n;
  const socket = join(rootDir, 'cri.sock');
  return {
    index,
    name,
    rootDir,
    kubeconfig: join(a.kubeconfigDir, `${name}.kubeconfig`),
    socket,
    port,
    healthzPort: port + 1,
    podIP: (k) => `10.${64 + (n >> 8)}.${n & 255}.${(k % 253) + 1}`,
    labels: { [HOLLOW_LABEL]: 'kubelet-ts', ...a.labels },
    config: {
      apiVersion: 'kubelet.config.k8s.io/v1beta1',
      kind: 'KubeletConfiguration',
      containerRuntimeEndpoint: `unix://${socket}`,
      port,
      healthzPort: port + 1,
      healthzBindAddress: '127.0.0.1',
      readOnlyPort: 0,
      podLogsDir: join(rootDir, 'pod-logs'),
      // The host is cgroup v1 here; a hollow node makes no cgroups (host.ts), so the check is moot.
      failCgroupV1: false,
      // No file or URL sources: kubemark's static pod dir is an empty temp dir.
      staticPodPath: '',
      // The disk is the machine's, shared by every hollow node (and read by none of them as its
      // own): no disk signals, or one full disk puts every node under DiskPressure at once.
      // Kubemark's eviction manager likewise finds no image filesystem and evicts nothing.
      evictionHard: { 'memory.available': '100Mi' },
      // The FlexVolume drivers' directory, made at start: the node's own, not the machine's.
      volumePluginDir: join(rootDir, 'volume-plugins'),
      ...(a.contentType ? { contentType: a.contentType } : {}),
    },
  };
}

/** Pure: the command line (`--nodes 10 --kubeconfig-dir D --root-dir R ...`), or the one-line refusal. */
export function parseHollowArgs(argv: string[]): HollowArgs | { error: string } {
  const a: HollowArgs = {
    nodes: 1,
    namePrefix: 'hollow-ts-',
    first: 0,
    kubeconfigDir: '',
    rootDir: '',
    basePort: 20250,
    labels: {},
    startConcurrency: 4,
  };
  const ints: Record<string, 'nodes' | 'first' | 'basePort' | 'startConcurrency'> = {
    '--nodes': 'nodes',
    '--first': 'first',
    '--base-port': 'basePort',
    '--start-concurrency': 'startConcurrency',
  };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i]!.split(/=(.*)/s, 2) as [string, string | undefined];
    const value = inline ?? argv[++i];
    if (value === undefined) return { error: `${flag} needs a value` };
    const int = ints[flag];
    if (int) {
      const v = Number(value);
      if (!Number.isInteger(v) || v < (int === 'first' ? 0 : 1)) return { error: `${flag}: not a valid number: ${value}` };
      a[int] = v;
    } else if (flag === '--name-prefix') a.namePrefix = value;
    else if (flag === '--kubeconfig-dir') a.kubeconfigDir = value;
    else if (flag === '--root-dir') a.rootDir = value;
    else if (flag === '--content-type') a.contentType = value;
    else if (flag === '--node-labels') {
      for (const kv of value.split(',').filter(Boolean)) {
        const [k, v] = kv.split('=', 2);
        if (!k || v === undefined) return { error: `--node-labels: not k=v: ${kv}` };
        a.labels[k] = v;
      }
    } else return { error: `unknown flag ${flag}` };
  }
  if (!a.kubeconfigDir) return { error: '--kubeconfig-dir is required' };
  if (!a.rootDir) return { error: '--root-dir is required' };
  if (a.basePort + 2 * (a.first + a.nodes) > 65536) return { error: `--base-port ${a.basePort}: the ports of ${a.nodes} nodes pass 65535` };
  return a;
}
