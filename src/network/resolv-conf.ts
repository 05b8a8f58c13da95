// The host's resolv.conf, which pods with dnsPolicy Default (and ClusterFirst's
// search path tail) inherit.
import { readFileSync } from 'node:fs';

export interface HostDNS {
  servers: string[];
  searches: string[];
  options: string[];
}

export function parseResolvConf(text: string): HostDNS {
  const out: HostDNS = { servers: [], searches: [], options: [] };
  for (const line of text.split('\n')) {
    const [key, ...rest] = line
      .replace(/[#;].*$/, '')
      .trim()
      .split(/\s+/);
    if (key === 'nameserver' && rest[0]) out.servers.push(rest[0]);
    else if (key === 'search' || key === 'domain') out.searches = rest;
    else if (key === 'options') out.options.push(...rest);
  }
  return out;
}

export function readResolvConf(path: string): HostDNS {
  try {
    return parseResolvConf(readFileSync(path, 'utf8'));
  } catch {
    return { servers: [], searches: [], options: [] };
  }
}
