// hairpinMode for the bridge network --network-plugin=kubenet writes (cni-config.ts): how a pod
// reaches itself through a Service, as the kubenet plugin did until upstream removed it in 1.24
// (pkg/kubelet/dockershim/network/kubenet). In v1.36.3 upstream validates the field and reads it
// nowhere else: with --network-plugin=cni the network add-on's own config decides, here too.
import { readFileSync } from 'node:fs';
import type { Logger } from '../log/log.ts';
import { runCommand } from './command.ts';

export type HairpinMode = 'promiscuous-bridge' | 'hairpin-veth' | 'none';
export const HAIRPIN_MODES: readonly HairpinMode[] = ['promiscuous-bridge', 'hairpin-veth', 'none'];

/**
 * Pure: the mode in effect, as upstream's effectiveHairpinMode (kubelet.go up to 1.23):
 * promiscuous-bridge works only on the bridge kubenet owns, so with any other network it falls
 * back to hairpin-veth (the default predates the flag, and kept the old behaviour).
 */
export function effectiveHairpinMode(mode: HairpinMode, networkPlugin: 'cni' | 'kubenet'): HairpinMode {
  return mode === 'promiscuous-bridge' && networkPlugin !== 'kubenet' ? 'hairpin-veth' : mode;
}

/**
 * Pure: the CNI bridge plugin's settings for a mode. hairpin-veth sets hairpin_mode on each pod's
 * bridge port; promiscuous-bridge puts the bridge itself in promiscuous mode (kubenet's
 * SetPromiscOn on cbr0), which then needs dedupRules; none sets neither.
 */
export function bridgeHairpin(mode: HairpinMode): { hairpinMode: boolean; promiscMode: boolean } {
  return { hairpinMode: mode === 'hairpin-veth', promiscMode: mode === 'promiscuous-bridge' };
}

/** The ebtables chain of the dedup rules, kubenet's name. */
export const DEDUP_CHAIN = 'KUBE-DEDUP';

/**
 * Pure: kubenet's syncEbtablesDedupRules. A promiscuous bridge also hands the host a copy of the
 * frames its pods send each other, which the host routes back out: the copies leave with the
 * bridge's MAC and a pod's source IP. Frames from the gateway itself stay; the rest of the pod
 * range is dropped on the way out to the pods' veths. The arguments after `ebtables -t filter`.
 */
export function dedupRules(bridgeMAC: string, gateway: string, podCIDR: string): string[][] {
  const v6 = gateway.includes(':');
  const common = ['-p', v6 ? 'IPv6' : 'IPv4', '-s', bridgeMAC, '-o', 'veth+'];
  const src = v6 ? '--ip6-src' : '--ip-src';
  return [
    ['-A', DEDUP_CHAIN, ...common, src, gateway, '-j', 'ACCEPT'],
    ['-A', DEDUP_CHAIN, ...common, src, podCIDR, '-j', 'DROP'],
  ];
}

/** What the dedup rules were last written for; undefined: not yet. */
export interface DedupState {
  bridgeMAC: string;
  gateway: string;
  podCIDR: string;
}

/**
 * Pure: the ebtables commands that bring the filter table to the dedup rules for the bridge as it
 * is now, or none when they were already written for it and the jump is still there. The chain is
 * flushed and refilled whole: the bridge's MAC changes when it is recreated, and stale rules must go.
 */
export function dedupCommands(now: DedupState, last: DedupState | undefined, jumpPresent: boolean): string[][] {
  const same = last && last.bridgeMAC === now.bridgeMAC && last.gateway === now.gateway && last.podCIDR === now.podCIDR;
  if (same && jumpPresent) return [];
  return [
    ['-N', DEDUP_CHAIN],
    ...(jumpPresent ? [] : [['-A', 'OUTPUT', '-j', DEDUP_CHAIN]]),
    ['-F', DEDUP_CHAIN],
    ...dedupRules(now.bridgeMAC, now.gateway, now.podCIDR),
  ];
}

/** The whole check again, with the bridge unchanged: repairs a flushed filter table, as kubenet's next SetUpPod did. */
export const DEDUP_RECHECK_MS = 300_000;

/**
 * Pure: whether a tick lists ebtables. The bridge's MAC comes from sysfs (no process): a new
 * bridge, or a new pod range, is checked at once; the same one only every DEDUP_RECHECK_MS.
 * Each check costs two processes forked from the kubelet; every 10 s they were a fifth of its idle CPU.
 */
export function dedupDue(mac: string | undefined, podCIDR: string, last: DedupState | undefined, sinceCheckMs: number): boolean {
  if (!mac) return false; // no bridge yet
  return !last || last.bridgeMAC !== mac || last.podCIDR !== podCIDR || sinceCheckMs >= DEDUP_RECHECK_MS;
}

function bridgeMAC(bridge: string): string | undefined {
  try {
    return readFileSync(`/sys/class/net/${bridge}/address`, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/**
 * Keeps the dedup rules for the kubenet bridge while the mode is promiscuous-bridge: the bridge
 * exists only once the first pod's network is set up (by the runtime's CNI call), so this is
 * called on every tick and looks only when dedupDue says. Upstream ran it after each pod's set-up.
 */
export function dedupKeeper(bridge: string, log: Logger, now: () => number = Date.now): (podCIDR: string) => Promise<void> {
  let last: DedupState | undefined;
  let checkedAt = 0;
  let busy = false;
  let noEbtables = false;
  return async (podCIDR) => {
    if (busy || noEbtables || !dedupDue(bridgeMAC(bridge), podCIDR, last, now() - checkedAt)) return;
    busy = true;
    try {
      await check(podCIDR);
      checkedAt = now();
    } finally {
      busy = false;
    }
  };
  async function check(podCIDR: string) {
    // Not -4: ip leaves the link's MAC out then.
    const link = await runCommand('ip', ['-j', 'addr', 'show', 'dev', bridge]);
    if (link.status !== 0) return; // the bridge went away
    const info = (JSON.parse(link.stdout || '[]') as { address?: string; addr_info?: { family: string; local: string }[] }[])[0];
    const gateway = info?.addr_info?.find((a) => a.family === 'inet')?.local;
    if (!info?.address || !gateway) return;
    const ebtables = (args: string[]) => runCommand('ebtables', ['-t', 'filter', ...args]);
    const listing = await ebtables(['-L', 'OUTPUT']);
    if (listing.error) {
      // As kubenet: no ebtables, no dedup rules (pods still reach themselves, with duplicates).
      log.warn('No ebtables: the promiscuous bridge runs without dedup rules', { err: listing.error.message });
      noEbtables = true;
      return;
    }
    const next = { bridgeMAC: info.address, gateway, podCIDR };
    const commands = dedupCommands(next, last, listing.stdout.includes(`-j ${DEDUP_CHAIN}`));
    for (const c of commands) {
      const r = await ebtables(c);
      // -N of a chain that exists fails, as kubenet's EnsureChain tolerates.
      if (r.status !== 0 && c[0] !== '-N') {
        log.warn('ebtables dedup rule failed', { args: c.join(' '), err: r.stderr.trim() });
        return;
      }
    }
    if (commands.length)
      log.info('Filtering duplicated packets of the promiscuous bridge with ebtables', { mac: next.bridgeMAC, gateway, podCIDR });
    last = next;
  }
}
