// Node and pod IPs on single-stack and dual-stack nodes, as upstream decides them: the node's IPs
// from --node-ip (nodeutil.ParseNodeIPArgument and the kubelet's node IP selection), a sandbox's
// IPs from CRI (determinePodSandboxIPs: the primary and every additional one), and the order of
// a pod's IPs in its status (sortPodIPs: one of each family, the node's primary family first).
import { isIP, isIPv4, isIPv6 } from 'node:net';

/** 4 or 6; 0 when not an IP. */
const family = (ip: string): 0 | 4 | 6 => isIP(ip) as 0 | 4 | 6;

/** The IP's canonical text (upstream re-stringifies what CRI or a flag gives: "::FFFF:1" forms, zeros). */
export function canonicalIP(ip: string): string | undefined {
  if (isIPv4(ip))
    return ip
      .split('.')
      .map((o) => String(Number(o)))
      .join('.');
  if (!isIPv6(ip)) return undefined;
  try {
    return new URL(`http://[${ip}]/`).hostname.slice(1, -1);
  } catch {
    return undefined;
  }
}

const UNSPECIFIED = new Set(['0.0.0.0', '::']);

/**
 * --node-ip's value as upstream's ParseNodeIPArgument reads it (sloppily): one IP, or two of
 * different families separated by a comma; "0.0.0.0" and "::" ask for the host's address of
 * that family. A part that is no IP is left out and returned in `invalid` (upstream logs them and
 * goes on); the pairs it refuses throw its words.
 */
export function parseNodeIPArgument(arg: string | undefined): { ips: string[]; invalid: string[] } {
  const ips: string[] = [],
    invalid: string[] = [];
  for (const part of arg ? arg.split(',').map((p) => p.trim()) : []) {
    const ip = canonicalIP(part);
    if (ip) ips.push(ip);
    else invalid.push(part);
  }
  if (ips.length > 2 || (ips.length === 2 && family(ips[0]!) === family(ips[1]!)))
    throw new Error(`bad --node-ip ${JSON.stringify(arg)}: must contain either a single IP or a dual-stack pair of IPs`);
  if (ips.length === 2 && ips.some((ip) => UNSPECIFIED.has(ip)))
    throw new Error(`bad --node-ip ${JSON.stringify(arg)}: dual-stack node IP cannot include '0.0.0.0' or '::'`);
  return { ips, invalid };
}

/**
 * The node's IPs: those given, with "0.0.0.0" or "::" (or nothing) replaced by the host's first
 * global address of that family (IPv4 when nothing was given), as upstream's node IP selection.
 * hostAddresses: the host's non-loopback addresses, in interface order.
 */
export function nodeIPs(given: string[], hostAddresses: readonly string[]): string[] {
  const pick = (f: 4 | 6) => hostAddresses.find((a) => family(a) === f && !a.startsWith('fe80:'));
  if (given.length === 0) {
    const ip = pick(4) ?? pick(6);
    if (!ip) throw new Error('no --node-ip given and no non-loopback address found on this host');
    return [ip];
  }
  return given.map((ip) => {
    if (!UNSPECIFIED.has(ip)) return ip;
    const f = family(ip) as 4 | 6;
    const found = pick(f);
    if (!found) throw new Error(`--node-ip ${ip}: no non-loopback IPv${f} address found on this host`);
    return found;
  });
}

/**
 * A sandbox's IPs as CRI reports them: the primary, then each additional one (dual-stack);
 * none when one does not parse (upstream logs it and reports no IP), or when the runtime gives
 * none (host network).
 */
export function sandboxIPs(network: { ip?: string; additionalIps?: { ip?: string }[] } | undefined | null): string[] {
  if (!network) return [];
  const all = [network.ip ?? '', ...(network.additionalIps ?? []).map((a) => a.ip ?? '')];
  if (all[0] === '') all.shift();
  const ips = all.map(canonicalIP);
  return ips.every((ip): ip is string => ip !== undefined) ? ips : [];
}

/** A pod's IPs in its status: at most one of each family, the node's primary family first (sortPodIPs). */
export function sortPodIPs(ips: readonly string[], nodeIPs: readonly string[]): string[] {
  const primary = nodeIPs.length === 0 || family(nodeIPs[0]!) === 4 ? 4 : 6;
  const first = ips.find((ip) => family(ip) === primary);
  const second = ips.find((ip) => family(ip) === (primary === 4 ? 6 : 4));
  return [first, second].filter((ip): ip is string => ip !== undefined);
}
