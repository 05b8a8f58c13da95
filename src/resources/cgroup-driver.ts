// Which cgroup driver the kubelet uses: the container runtime's, when CRI RuntimeConfig answers
// (upstream's getCgroupDriverFromCRI, cmd/kubelet/app/server.go; KubeletCgroupDriverFromCRI is
// GA and locked on), else the KubeletConfiguration's cgroupDriver (containerd 1.6 answers
// UNIMPLEMENTED). Pure: the CRI call and its retries are the caller's.
export type CgroupDriver = 'cgroupfs' | 'systemd';

/** What RuntimeConfig said: its Linux part's driver, no Linux part, UNIMPLEMENTED, or another error. */
export type RuntimeConfigAnswer = { linux: { cgroupDriver: string } } | { linux: undefined } | { unimplemented: true } | { error: unknown };

export type CgroupDriverChoice =
  /** criLosingSupport: the release that drops the fallback (upstream's kubelet_cri_losing_support). */
  { driver: CgroupDriver; from: 'runtime' | 'config'; log?: string; criLosingSupport?: string } | { error: string };

export function cgroupDriverInEffect(configured: CgroupDriver, answer: RuntimeConfigAnswer): CgroupDriverChoice {
  if ('error' in answer) return { error: `cannot read the container runtime's cgroup driver (CRI RuntimeConfig): ${String(answer.error)}` };
  if ('unimplemented' in answer)
    return {
      driver: configured,
      from: 'config',
      criLosingSupport: '1.37.0',
      log: 'CRI implementation should be updated to support RuntimeConfig. Falling back to using cgroupDriver from kubelet config.',
    };
  // Without its Linux part, proto3's default would read as SYSTEMD: upstream keeps the config's.
  if (!answer.linux) return { driver: configured, from: 'config' };
  const driver = { SYSTEMD: 'systemd', CGROUPFS: 'cgroupfs' }[answer.linux.cgroupDriver] as CgroupDriver | undefined;
  if (!driver) return { error: `runtime returned an unknown cgroup driver ${answer.linux.cgroupDriver}` };
  return { driver, from: 'runtime', log: 'Using cgroup driver setting received from the CRI runtime' };
}

/**
 * libcontainer's check before its systemd manager (IsRunningSystemd: /run/systemd/system is
 * there): the systemd driver on a host whose init is not systemd stops the start with this
 * line, rather than fail every pod's cgroup later.
 */
export function driverUnusable(driver: CgroupDriver, systemdRunning: boolean): string | undefined {
  if (driver === 'cgroupfs' || systemdRunning) return undefined;
  return 'the systemd cgroup driver is in effect, but systemd is not running on this host (no /run/systemd/system): configure the container runtime and cgroupDriver for cgroupfs';
}
