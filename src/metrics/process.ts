// The series of client_golang's process collector that prom-client's default metrics leave out:
// the network namespace's bytes (process_network_*_bytes_total, procfs's NetDev.Total over
// /proc/self/net/dev) and the address space limit (process_virtual_memory_max_bytes, from
// /proc/self/limits). Parsing is pure; the files are read at each scrape.
import { readFileSync } from 'node:fs';

/** Pure: procfs's NetDev.Total: the received and sent bytes of every interface of /proc/PID/net/dev, lo too. */
export function netDevTotals(text: string): { receiveBytes: number; transmitBytes: number } | undefined {
  let receiveBytes = 0,
    transmitBytes = 0,
    interfaces = 0;
  for (const line of text.split('\n').slice(2)) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const fields = line
      .slice(colon + 1)
      .trim()
      .split(/\s+/)
      .map(Number);
    // Receive: bytes packets errs drop fifo frame compressed multicast; then Transmit: bytes ...
    if (fields.length < 16 || fields.some(Number.isNaN)) return undefined;
    receiveBytes += fields[0]!;
    transmitBytes += fields[8]!;
    interfaces++;
  }
  return interfaces ? { receiveBytes, transmitBytes } : undefined;
}

/** Pure: the soft limit "Max address space" of /proc/PID/limits in bytes; unlimited is RLIM_INFINITY (2^64-1), as procfs reads it. */
export function addressSpaceLimit(text: string): number | undefined {
  const m = /^Max address space\s+(\S+)/m.exec(text);
  if (!m) return undefined;
  return m[1] === 'unlimited' ? 2 ** 64 : Number(m[1]);
}

const read = (path: string) => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
};

export const processNetwork = () => netDevTotals(read('/proc/self/net/dev'));
export const processAddressSpaceLimit = () => addressSpaceLimit(read('/proc/self/limits'));
