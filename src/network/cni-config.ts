// With no network add-on installed, the kubelet writes a bridge network for the
// Node's podCIDR, as the old kubenet plugin did, so a freshly joined node runs pods.
// A config the kubelet did not write is never touched.
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const CONFLIST_NAME = '10-kubelet-ts.conflist';
export const NETWORK_NAME = 'kubelet-ts';
export const BRIDGE_NAME = 'kts-br0';

export function bridgeConflist(podCIDR: string): string {
  return JSON.stringify({
    cniVersion: '0.4.0',
    name: NETWORK_NAME,
    plugins: [
      {
        type: 'bridge', bridge: BRIDGE_NAME, isGateway: true, ipMasq: true, hairpinMode: true,
        ipam: { type: 'host-local', ranges: [[{ subnet: podCIDR }]], routes: [{ dst: '0.0.0.0/0' }] },
      },
      { type: 'portmap', capabilities: { portMappings: true } },
      { type: 'loopback' },
    ],
  }, null, 2) + '\n';
}

/** What to do with the CNI config dir: pure over its listing and our file's content. */
export function cniAction(files: string[], ours: string | undefined, podCIDR: string): 'write' | 'keep' | 'foreign' {
  const configs = files.filter((f) => /\.(conf|conflist|json)$/.test(f));
  if (configs.some((f) => f !== CONFLIST_NAME) && configs.sort()[0] !== CONFLIST_NAME) return 'foreign';
  return ours === bridgeConflist(podCIDR) ? 'keep' : 'write';
}

/** Writes (atomically) our conflist when needed; returns what it did. */
export function ensureCniConfig(dir: string, podCIDR: string): 'write' | 'keep' | 'foreign' {
  mkdirSync(dir, { recursive: true });
  const files = readdirSync(dir);
  let ours: string | undefined;
  try { ours = readFileSync(join(dir, CONFLIST_NAME), 'utf8'); } catch { /* not written yet */ }
  const action = cniAction(files, ours, podCIDR);
  if (action === 'write') {
    const tmp = join(dir, `.${CONFLIST_NAME}.tmp`);
    writeFileSync(tmp, bridgeConflist(podCIDR));
    renameSync(tmp, join(dir, CONFLIST_NAME));
  }
  return action;
}
