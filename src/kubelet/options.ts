// What the command line hands the kubelet: its flags and the KubeletConfiguration, resolved (src/cli).
import type { Taint } from 'kubernetes-types/core/v1.js';
import type { KubeletConfig } from '../config/kubelet-config.ts';
import type { CgroupDriver } from '../resources/cgroup-driver.ts';
import type { SystemCgroupsConfig } from '../node/system-cgroups.ts';
import type { ContainerGCPolicy } from '../gc/containers.ts';
import type { HostIdFiles } from '../node/host.ts';
import type { LoadedProviders } from '../images/credential-provider/plugins.ts';
import type { ContainerHints } from '../stats/filesystems.ts';

export interface KubeletOptions {
  kubeconfig: string;
  /** --bootstrap-kubeconfig: asks for a new client certificate once the current one expired. */
  bootstrapKubeconfig?: string;
  config: KubeletConfig;
  nodeName: string;
  certDir: string;
  nodeIP?: string;
  runtimeEndpoint: string;
  rootDir: string;
  /** --image-credential-provider-config and -bin-dir, read and checked: the plugins pod-runtime.ts builds (src/images/credential-provider). */
  credentialProviders?: LoadedProviders;
  nodeLabels: Record<string, string>;
  taints: Taint[];
  cniConfDir: string;
  /** 'kubenet': write a bridge network for the Node's podCIDR when no add-on installed one (src/network). */
  networkPlugin: 'cni' | 'kubenet';
  /** kubeletCgroups, systemCgroups and --runtime-cgroups: the system containers (src/node/system-cgroups.ts). */
  systemCgroups: SystemCgroupsConfig;
  /** --cloud-provider: '' or 'external' (the only ones upstream has left): the Node's uninitialized taint and addresses (src/node/status.ts). */
  cloudProvider?: '' | 'external';
  /** The deprecated --minimum-container-ttl-duration, --maximum-dead-containers(-per-container); upstream's defaults when unset. */
  containerGCPolicy?: ContainerGCPolicy;
  /** cAdvisor's --machine-id-file and --boot-id-file: where the Node's machineID and bootID are read (src/node/host.ts). */
  hostIdFiles?: HostIdFiles;
  /**
   * cAdvisor's --housekeeping-interval (the kubelet's default 10 s) and --global-housekeeping-interval
   * (1 min): the stats are sampled every intervalMs, the smaller of the two, since each sample also
   * finds the new containers; --log-cadvisor-usage: the kubelet's own usage logged after each
   * sample (src/stats/usage-log.ts).
   */
  housekeeping?: { intervalMs: number; logUsage: boolean };
  /** cAdvisor's --container-hints: the host directories whose filesystems a raw cgroup reports (src/stats/filesystems.ts). */
  containerHints?: ContainerHints;
  /** cAdvisor's --application-metrics-count-limit (src/stats/app-metrics/); its default 100. */
  appMetricsLimit?: number;
  /** --experimental-allocatable-ignore-eviction: node allocatable withholds no hard eviction threshold (allocatableEvictionHard). */
  allocatableIgnoresEviction?: boolean;
  /** /flagz: every flag of the command line with its value (src/cli/flagz.ts); undefined: no /flagz. */
  flagz?: Record<string, string>;
}

// The Kubernetes release whose kubelet behaviour kubelet-ts implements.
export const KUBELET_VERSION = 'v1.36.3';

/**
 * The hard eviction thresholds node allocatable withholds (the Node's allocatable, the memory
 * manager's reservation): server.go leaves NodeConfig's HardEvictionThresholds empty with
 * --experimental-allocatable-ignore-eviction. The eviction manager enforces them either way.
 */
export const allocatableEvictionHard = (o: KubeletOptions): Record<string, string> =>
  o.allocatableIgnoresEviction ? {} : o.config.evictionHard;

/** Something a subsystem runs that the kubelet's stop ends. */
export interface Stoppable {
  stop(): unknown;
}

/** Stops parts in the order given (a part not built is skipped), then waits for those whose stop takes time. */
export async function stopAll(parts: (Stoppable | undefined)[]): Promise<void> {
  await Promise.all(parts.map((part) => part?.stop()));
}

/**
 * The options every part is built from, as upstream's run settles them before it makes the
 * container manager: the cgroup driver in effect is the runtime's (and /configz shows it), and
 * the CPU manager's reservedSystemCPUs stand for the reserved cpu everywhere (node allocatable,
 * kubepods, its reservation): `reserved` is nodeCPUs' (src/kubelet/container-manager.ts).
 */
export function effectiveOptions(
  given: KubeletOptions,
  conn: { cgroupDriver: CgroupDriver },
  reserved: Pick<KubeletConfig, 'kubeReserved' | 'systemReserved'>,
): KubeletOptions {
  return { ...given, config: { ...given.config, cgroupDriver: conn.cgroupDriver, ...reserved } };
}
