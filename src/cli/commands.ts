// kubelet-ts's commands: the kubelet with upstream's flag names, and join.
import type { Command, Flags, Program, Values } from './args.ts';

const kubeletFlags = {
  kubeconfig: {
    type: 'string',
    default: '/etc/kubernetes/kubelet.conf',
    describe: 'kubeconfig with the credentials the kubelet uses to reach the apiserver',
  },
  'bootstrap-kubeconfig': {
    type: 'string',
    describe: 'kubeconfig for TLS bootstrap, used when --kubeconfig holds no usable credentials',
  },
  config: { type: 'string', describe: 'KubeletConfiguration file (kubelet.config.k8s.io/v1beta1)' },
  'hostname-override': { type: 'string', describe: 'the node name to use instead of the hostname' },
  'node-ip': { type: 'string', describe: "the node's InternalIP (default: the first non-loopback IPv4 address)" },
  'container-runtime-endpoint': { type: 'string', describe: 'CRI endpoint, e.g. unix:///run/containerd/containerd.sock' },
  'root-dir': {
    type: 'string',
    default: '/var/lib/kubelet',
    describe: 'directory for kubelet files (pods, plugins, certificates)',
  },
  'cert-dir': { type: 'string', describe: 'directory of the TLS certificates (default ROOT-DIR/pki)' },
  'node-labels': { type: 'string', default: '', describe: 'labels to add when registering the node, key=value,...' },
  'register-with-taints': {
    type: 'string',
    default: '',
    describe: 'taints to add when registering the node, key=value:Effect,...',
  },
  'cni-conf-dir': {
    type: 'string',
    default: '/etc/cni/net.d',
    describe: 'where the runtime reads the pod network config (and --network-plugin=kubenet writes it)',
  },
  'network-plugin': {
    type: 'string',
    choices: ['cni', 'kubenet'],
    default: 'cni',
    describe:
      "cni: the pod network is the runtime's CNI config, installed by a network add-on (upstream's only mode); " +
      "kubenet: with no add-on, the kubelet writes a bridge network for the Node's podCIDR, as the kubenet plugin did before 1.24",
  },
  'cgroup-root': { type: 'string', describe: 'the cgroup below which kubepods is made (config field cgroupRoot)' },
  port: { type: 'number', describe: 'port of the kubelet API (config field port)' },
  'healthz-port': { type: 'number', describe: 'port of the local healthz endpoint (config field healthzPort)' },
  'read-only-port': {
    type: 'number',
    describe: 'port of the unauthenticated read-only API, 0 for none (config field readOnlyPort)',
  },
  'kubelet-cgroups': { type: 'string', describe: 'the cgroup the kubelet moves itself into (config field kubeletCgroups)' },
  'system-cgroups': {
    type: 'string',
    describe: "the cgroup the root cgroup's non-kernel processes are moved into (config field systemCgroups)",
  },
  'runtime-cgroups': {
    type: 'string',
    default: '',
    describe: 'the runtime\'s cgroup, reported as the system container "runtime"',
  },
  v: { type: 'number', default: 0, describe: 'log verbosity' },
} as const satisfies Flags;

// kubeadm join's flags and the files it writes, for the kubelet that follows.
const joinFlags = {
  ...kubeletFlags,
  'bootstrap-kubeconfig': { ...kubeletFlags['bootstrap-kubeconfig'], default: '/etc/kubernetes/bootstrap-kubelet.conf' },
  config: { ...kubeletFlags.config, default: '/var/lib/kubelet/config.yaml' },
  token: { type: 'string', required: true, describe: 'bootstrap token, [a-z0-9]{6}.[a-z0-9]{16}' },
  'discovery-token-ca-cert-hash': { type: 'strings', default: [], describe: 'sha256:<hex> pin of the cluster CA public key' },
} as const satisfies Flags;

export type KubeletArgs = Values<typeof kubeletFlags>;

const commands = {
  kubelet: { usage: '', describe: 'run the kubelet', positionals: [], flags: kubeletFlags },
  join: {
    usage: 'join <endpoint>',
    describe: 'join a kubeadm cluster as a worker (token discovery, as kubeadm join), then run the kubelet',
    positionals: [{ name: 'endpoint', describe: 'the apiserver, host:port' }],
    flags: joinFlags,
  },
} satisfies Record<string, Command>;

export function program(version: string): Program<typeof commands> {
  return {
    name: 'kubelet-ts',
    usage: '[flags]',
    describe: 'The Kubernetes node agent, in TypeScript: registers this host as a Node and runs its pods on a CRI runtime.',
    version,
    defaultCommand: 'kubelet',
    commands,
  };
}
