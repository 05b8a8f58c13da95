// kubelet-ts's commands: the kubelet with upstream's flags, and join.
//
// Every flag of upstream's kubelet (NewKubeletCommand: KubeletFlags.AddFlags,
// AddKubeletConfigFlags, AddGlobalFlags) is one of three kinds here: a KubeletConfiguration
// flag, read from the flag column of src/config/kubelet-config.ts's FIELDS; one of the
// KubeletFlags below; or REFUSED, which stops the start with one line saying why.
// src/cli/upstream-flags.test.ts checks the three against the pinned release's list.
import { CONFIG_FLAGS, FIELDS, isBoolFlag, yamlName } from '../config/kubelet-config.ts';
import {
  type FlagForm,
  boolMapForm,
  colonMultimapForm,
  durationForm,
  intForm,
  langleMapForm,
  mapForm,
  mapNoSplitForm,
  quantityForm,
  reservedMemoryForm,
  stringsForm,
  taintsForm,
  vmoduleForm,
} from '../config/flag-forms.ts';
import { DEFAULT_ID_FILES } from '../node/host.ts';
import type { Command, Flag, Flags, Program, Values } from './args.ts';
import { CADVISOR } from './upstream-flags.ts';

// Upstream's KubeletFlags (options.go KubeletFlags.AddFlags) kubelet-ts reads, and its own two
// network flags.
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
  config: { type: 'string', describe: 'KubeletConfiguration file (kubelet.config.k8s.io/v1beta1); flags override it' },
  'config-dir': {
    type: 'string',
    describe:
      'drop-in directory: its *.conf KubeletConfiguration files, in lexical order (subdirectories too), merged over --config; flags override them',
  },
  'hostname-override': { type: 'string', describe: 'the node name to use instead of the hostname' },
  'node-ip': {
    type: 'string',
    describe:
      "the node's InternalIP, or a dual-stack pair 'IPv4,IPv6' (either first); '::' or '0.0.0.0': the host's address of that family (default: the first non-loopback IPv4 address)",
  },
  'cloud-provider': {
    type: 'string',
    default: '',
    describe: '"" for no cloud provider, or "external" for an external cloud controller manager (in-tree providers are gone upstream)',
  },
  'root-dir': {
    type: 'string',
    default: '/var/lib/kubelet',
    describe: 'directory for kubelet files (pods, plugins, certificates)',
  },
  'cert-dir': { type: 'string', describe: 'directory of the TLS certificates (default ROOT-DIR/pki)' },
  'image-credential-provider-config': {
    type: 'string',
    describe:
      'a credential provider plugin config file (JSON/YAML/YML) or a directory of such files (merged in lexical order; not recursive)',
  },
  'image-credential-provider-bin-dir': {
    type: 'string',
    describe: 'the directory where the credential provider plugin binaries are',
  },
  'lock-file': {
    type: 'string',
    describe: 'a file to hold an exclusive flock on while the kubelet runs (waited for at start)',
  },
  'exit-on-lock-contention': {
    type: 'boolean',
    describe: 'exit when another process waits for the --lock-file, or it is deleted',
  },
  // cAdvisor's, deprecated upstream and still read there (machine/info.go).
  'machine-id-file': {
    type: 'string',
    default: DEFAULT_ID_FILES.machineID,
    describe: "deprecated: comma-separated files to read the Node's machineID from, the first that exists",
  },
  'boot-id-file': {
    type: 'string',
    default: DEFAULT_ID_FILES.bootID,
    describe: "deprecated: comma-separated files to read the Node's bootID from, the first that exists",
  },
  // cAdvisor's, deprecated upstream (but --housekeeping-interval): how often the stats are sampled
  // (src/stats/cache.ts); 10 s is the kubelet's own default (cadvisor_linux.go's flagOverrides).
  'housekeeping-interval': {
    type: 'string',
    typeName: 'duration',
    default: '10s',
    describe: "how often the containers' stats are sampled",
  },
  'global-housekeeping-interval': {
    type: 'string',
    typeName: 'duration',
    default: '1m0s',
    describe:
      'deprecated: at most this long until a new container is seen in the stats (they are sampled at the smaller of the two intervals)',
  },
  // Read at start when the file is there, as cAdvisor reads its default path (src/stats/filesystems.ts).
  'container-hints': {
    type: 'string',
    default: '/etc/cadvisor/container_hints.json',
    describe: "deprecated: cAdvisor's hints: the host directories whose filesystems a raw cgroup reports in /metrics/cadvisor",
  },
  'application-metrics-count-limit': {
    type: 'number',
    default: 100,
    describe: 'deprecated: at most this many application metrics a collector (io.cadvisor.metric.* container labels), else it reports none',
  },
  'log-cadvisor-usage': {
    type: 'boolean',
    describe: "deprecated: log the kubelet's own CPU and memory after every stats sample, once 60 are kept",
  },
  'seccomp-default': {
    type: 'boolean',
    describe: 'RuntimeDefault as the default seccomp profile of every workload (or seccompDefault in the config)',
  },
  'node-labels': { type: 'string', default: '', describe: 'labels to add when registering the node, key=value,...' },
  'runtime-cgroups': {
    type: 'string',
    default: '',
    describe: 'the runtime\'s cgroup, reported as the system container "runtime"',
  },
  'experimental-allocatable-ignore-eviction': {
    type: 'boolean',
    describe: "deprecated: the hard eviction thresholds are not withheld from the Node's allocatable",
  },
  // Deprecated upstream, kept: the container GC policy (upstream's defaults).
  'minimum-container-ttl-duration': {
    type: 'string',
    typeName: 'duration',
    default: '0s',
    describe: 'deprecated: minimum age of a finished container before it is garbage collected',
  },
  'maximum-dead-containers-per-container': {
    type: 'number',
    default: 1,
    describe: 'deprecated: dead instances kept per container',
  },
  'maximum-dead-containers': {
    type: 'number',
    default: -1,
    describe: 'deprecated: dead containers kept on the node; negative: no limit',
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
} as const satisfies Flags;

/** Upstream's flags kubelet-ts does not do: given, each stops the start with "--name: why". */
export const REFUSED: Record<string, { type: 'string' | 'boolean'; why: string }> = {
  // mount_linux.go uses it for nfs, glusterfs, ceph and cifs mounts only, none of which kubelet-ts makes.
  'experimental-mounter-path': {
    type: 'string',
    why: 'a mounter for NFS, CIFS, Ceph and GlusterFS mounts, which kubelet-ts does not make (only CSI and FlexVolume drivers mount those)',
  },
};

// How each flag form reads, in the help.
const FORM_NAMES = new Map<FlagForm, string>([
  [intForm, 'int'],
  [durationForm, 'duration'],
  [quantityForm, 'quantity'],
  [stringsForm, 'a,b,...'],
  [mapForm, 'k=v,...'],
  [langleMapForm, 'signal<quantity,...'],
  [mapNoSplitForm, 'k=v'],
  [boolMapForm, 'Gate=true,...'],
  [colonMultimapForm, 'name:value,...'],
  [taintsForm, 'key=value:Effect,...'],
  [reservedMemoryForm, 'node:type=quantity,...'],
  [vmoduleForm, 'pattern=N,...'],
]);

const notInEffect = new Set(
  Object.entries(FIELDS).flatMap(([key, f]) => (f.inEffect ? [] : [yamlName(key, f as Parameters<typeof yamlName>[1])])),
);

/** The KubeletConfiguration flags, from the field table: every occurrence's text kept, a bool one as pflag's. */
export const configFlags: Flags = Object.fromEntries(
  [...CONFIG_FLAGS].map(([name, spec]): [string, Flag] => {
    const field = [spec.field, ...spec.path].join('.');
    const describe = `sets KubeletConfiguration ${field}${notInEffect.has(spec.field) ? ' (not in effect in kubelet-ts: warned about when set)' : ''}`;
    return [
      name,
      isBoolFlag(name) ? { type: 'boolean', describe } : { type: 'strings', typeName: FORM_NAMES.get(spec.form) ?? 'string', describe },
    ];
  }),
);

/**
 * cAdvisor's deprecated flags kubelet-ts takes (globalflags_linux.go registerDeprecated): those
 * upstream's kubelet registers and then reads nowhere it serves (cAdvisor's storage drivers are
 * never made in it; its event store is never read: the OOM watcher parses the kernel log on its
 * own; the load --enable-load-reader reads feeds only container_cpu_load_average_10s, which is
 * not in the kubelet's metric set), and --containerd and --containerd-namespace when they name
 * what CRI is (cadvisorContainerdError).
 */
export const CADVISOR_TAKEN: Record<string, 'string' | 'boolean'> = {
  containerd: 'string',
  'containerd-namespace': 'string',
  'enable-load-reader': 'boolean',
  'event-storage-age-limit': 'string',
  'event-storage-event-limit': 'string',
  'storage-driver-buffer-duration': 'string',
  'storage-driver-db': 'string',
  'storage-driver-host': 'string',
  'storage-driver-password': 'string',
  'storage-driver-secure': 'boolean',
  'storage-driver-table': 'string',
  'storage-driver-user': 'string',
};
/**
 * cAdvisor's containerd handler's socket and namespace: where upstream's cAdvisor reads the
 * containers' labels for /metrics/cadvisor. kubelet-ts reads them through CRI, so the two are
 * taken when they name what CRI is: the runtime endpoint's socket, and containerd's CRI
 * namespace (k8s.io); otherwise the start stops saying so. Pure: the refusal, or undefined.
 */
export function cadvisorContainerdError(values: Record<string, unknown>, runtimeEndpoint: string): string | undefined {
  const socket = values.containerd;
  const runtimeSocket = runtimeEndpoint.replace(/^unix:\/\//, '');
  if (typeof socket === 'string' && socket.replace(/^unix:\/\//, '') !== runtimeSocket)
    return `--containerd: ${socket} is not the runtime's socket (${runtimeSocket}); kubelet-ts reads containers through CRI only`;
  const ns = values['containerd-namespace'];
  if (typeof ns === 'string' && ns !== 'k8s.io')
    return `--containerd-namespace: ${ns}: kubelet-ts reads containers through CRI, whose namespace in containerd is k8s.io`;
  return undefined;
}

const unreadFlags: Flags = Object.fromEntries(
  Object.entries(CADVISOR_TAKEN).map(([name, type]): [string, Flag] => [name, { type, describe: `deprecated: ${CADVISOR}` }]),
);

const refusedFlags: Flags = Object.fromEntries(
  Object.entries(REFUSED).map(([name, r]): [string, Flag] => [
    name,
    r.type === 'boolean'
      ? { type: 'boolean', describe: `refused: ${r.why}` }
      : { type: 'strings', typeName: 'string', describe: `refused: ${r.why}` },
  ]),
);

const allKubeletFlags = { ...kubeletFlags, ...configFlags, ...unreadFlags, ...refusedFlags } as typeof kubeletFlags & Flags;

// kubeadm join's flags and the files it writes, for the kubelet that follows.
const joinFlags = {
  ...allKubeletFlags,
  'bootstrap-kubeconfig': { ...kubeletFlags['bootstrap-kubeconfig'], default: '/etc/kubernetes/bootstrap-kubelet.conf' },
  config: { ...kubeletFlags.config, default: '/var/lib/kubelet/config.yaml' },
  token: { type: 'string', required: true, describe: 'bootstrap token, [a-z0-9]{6}.[a-z0-9]{16}' },
  'discovery-token-ca-cert-hash': { type: 'strings', default: [], describe: 'sha256:<hex> pin of the cluster CA public key' },
} as const satisfies Flags;

/** The kubelet's own flags typed; the config and refused ones by name (`given`). */
export type KubeletArgs = Values<typeof kubeletFlags> & Record<string, unknown>;

/** The KubeletConfiguration flags given, in the form loadKubeletConfig takes: [name, text] in order. */
export function givenConfigFlags(values: Record<string, unknown>): [string, string][] {
  return [...CONFIG_FLAGS.keys()].flatMap((name): [string, string][] => {
    const v = values[name];
    if (v === undefined) return [];
    return Array.isArray(v) ? v.map((t): [string, string] => [name, String(t)]) : [[name, String(v)]];
  });
}

/** The first refused flag given, as its one-line refusal. */
export function refusedFlag(values: Record<string, unknown>): string | undefined {
  const name = Object.keys(REFUSED).find((n) => values[n] !== undefined);
  return name && `--${name}: ${REFUSED[name]!.why}`;
}

const commands = {
  kubelet: { usage: '', describe: 'run the kubelet', positionals: [], flags: allKubeletFlags },
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
