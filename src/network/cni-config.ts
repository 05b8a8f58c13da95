// With no network add-on installed, the kubelet writes a bridge network for the
// Node's podCIDR, as the old kubenet plugin did, so a freshly joined node runs pods.
// A config the kubelet did not write is never touched.
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { bridgeHairpin, type HairpinMode } from './hairpin.ts';

export const CONFLIST_NAME = '10-kubelet-ts.conflist';
export const NETWORK_NAME = 'kubelet-ts';
export const BRIDGE_NAME = 'kts-br0';

/** The bridge network for the podCIDR; the hairpin mode in effect (hairpin.ts) sets the bridge's hairpinMode and promiscMode. */
export function bridgeConflist(podCIDR: string, hairpin: HairpinMode): string {
  return (
    JSON.stringify(
      {
        cniVersion: '0.4.0',
        name: NETWORK_NAME,
        plugins: [
          {
            type: 'bridge',
            bridge: BRIDGE_NAME,
            isGateway: true,
            ipMasq: true,
            ...bridgeHairpin(hairpin),
            ipam: { type: 'host-local', ranges: [[{ subnet: podCIDR }]], routes: [{ dst: '0.0.0.0/0' }] },
          },
          { type: 'portmap', capabilities: { portMappings: true } },
          { type: 'loopback' },
        ],
      },
      null,
      2,
    ) + '\n'
  );
}

/** What to do with the CNI config dir: pure over its listing and our file's content. */
export function cniAction(files: string[], ours: string | undefined, podCIDR: string, hairpin: HairpinMode): 'write' | 'keep' | 'foreign' {
  const configs = files.filter((f) => /\.(conf|conflist|json)$/.test(f));
  if (configs.some((f) => f !== CONFLIST_NAME) && configs.sort()[0] !== CONFLIST_NAME) return 'foreign';
  return ours === bridgeConflist(podCIDR, hairpin) ? 'keep' : 'write';
}

/** Writes (atomically) our conflist when needed; returns what it did. */
export function ensureCniConfig(dir: string, podCIDR: string, hairpin: HairpinMode): 'write' | 'keep' | 'foreign' {
  mkdirSync(dir, { recursive: true });
  const files = readdirSync(dir);
  let ours: string | undefined;
  try {
    ours = readFileSync(join(dir, CONFLIST_NAME), 'utf8');
  } catch {
    /* not written yet */
  }
  const action = cniAction(files, ours, podCIDR, hairpin);
  if (action === 'write') {
    const tmp = join(dir, `.${CONFLIST_NAME}.tmp`);
    writeFileSync(tmp, bridgeConflist(podCIDR, hairpin));
    renameSync(tmp, join(dir, CONFLIST_NAME));
  }
  if (action !== 'foreign') dropStaleBridgeAddress(podCIDR);
  return action;
}

/** The log line's fields for what ensureCniConfig did with the Node's podCIDR (--network-plugin=kubenet). */
export function cniConfigLogFields(podCIDR: string, action: 'write' | 'keep' | 'foreign'): { podCIDR: string; cniConfig: string } {
  const cniConfig = { foreign: 'left to the installed network add-on', write: 'written', keep: 'unchanged' }[action];
  return { podCIDR, cniConfig };
}

/** Pure: whether an IPv4 address/prefix lies outside the subnet (both in CIDR form). */
export function outsideSubnet(address: string, prefixLen: number, subnet: string): boolean {
  const toInt = (a: string) => a.split('.').reduce((n, o) => n * 256 + Number(o), 0);
  const [net, bits] = subnet.split('/');
  const size = 2 ** (32 - Number(bits));
  return prefixLen !== Number(bits) || Math.floor(toInt(address) / size) !== Math.floor(toInt(net!) / size);
}

/**
 * After the podCIDR changed (the Node was re-created), the bridge still holds the old
 * gateway address and the bridge plugin refuses to add pods until it is gone. Pods of
 * the old range lose their gateway: a podCIDR change needs them recreated anyway.
 */
function dropStaleBridgeAddress(podCIDR: string) {
  const r = spawnSync('ip', ['-j', '-4', 'addr', 'show', 'dev', BRIDGE_NAME], { encoding: 'utf8' });
  if (r.status !== 0) return; // no bridge yet: the plugin creates it
  const infos = (JSON.parse(r.stdout || '[]') as { addr_info?: { local: string; prefixlen: number }[] }[]).flatMap(
    (l) => l.addr_info ?? [],
  );
  if (infos.some((a) => outsideSubnet(a.local, a.prefixlen, podCIDR)))
    spawnSync('ip', ['addr', 'flush', 'dev', BRIDGE_NAME], { stdio: 'ignore' });
}
