// The kernel settings a node runs with, as upstream's containerManager.setupNode checks them
// at start (setupKernelTunables): memory is always overcommitted (a pod over its limit meets
// the OOM killer, not a failed allocation), an OOM does not panic the node, a panic or an oops
// reboots it in 10 s, and root may hold a million keys. protectKernelDefaults: true refuses to
// start when one differs (the CIS benchmark's setting); false (the default) writes them.
import { readFileSync, writeFileSync } from 'node:fs';
import type { Logger } from '../log/log.ts';

/** upstream's desiredState (component-helpers' sysctl names and values). */
export const KERNEL_TUNABLES: Record<string, number> = {
  'vm/overcommit_memory': 1,
  'vm/panic_on_oom': 0,
  'kernel/panic': 10,
  'kernel/panic_on_oops': 1,
  'kernel/keys/root_maxkeys': 1_000_000,
  'kernel/keys/root_maxbytes': 25_000_000,
};

export interface Sysctl {
  get(name: string): number;
  set(name: string, value: number): void;
}

const hostSysctl: Sysctl = {
  get: (name) => Number(readFileSync(`/proc/sys/${name}`, 'utf8').trim()),
  set: (name, value) => writeFileSync(`/proc/sys/${name}`, String(value)),
};

/** Pure: what to write, and what refuses the start (in upstream's words), given the current values. */
export function tunablesPlan(current: Record<string, number | Error>, protect: boolean): { set: [string, number][]; errors: string[] } {
  const set: [string, number][] = [],
    errors: string[] = [];
  for (const [flag, want] of Object.entries(KERNEL_TUNABLES)) {
    const have = current[flag];
    if (have instanceof Error) errors.push(have.message);
    else if (have === want) continue;
    else if (protect) errors.push(`invalid kernel flag: ${flag}, expected value: ${want}, actual value: ${have}`);
    else set.push([flag, want]);
  }
  return { set, errors };
}

/** Throws (the kubelet does not start) with upstream's aggregate of what is wrong. */
export function setupKernelTunables(protect: boolean, log: Logger, sysctl: Sysctl = hostSysctl): void {
  const current: Record<string, number | Error> = {};
  for (const flag of Object.keys(KERNEL_TUNABLES)) {
    try {
      current[flag] = sysctl.get(flag);
    } catch (e) {
      current[flag] = e as Error;
    }
  }
  const { set, errors } = tunablesPlan(current, protect);
  for (const [flag, value] of set) {
    log.v(2, 'Updating kernel flag', { flag, expectedValue: value, actualValue: current[flag] });
    try {
      sysctl.set(flag, value);
    } catch (e) {
      errors.push((e as Error).message);
    }
  }
  // utilerrors.NewAggregate's text: one error alone, several in brackets.
  if (errors.length) throw new Error(`Failed to start ContainerManager: ${errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`}`);
}
