// What a kubelet asks of the apiserver, from the apiserver's audit log of the nodes' requests
// (hack/control-plane.sh logs system:nodes at the Metadata level): apiserver_request_total has
// no client label, and every request a kubelet makes is multiplied by the nodes of a cluster.
import { readFileSync, readdirSync } from 'node:fs';
import { ROOT } from './lib.ts';

const LOGS = `${ROOT}/_output/local/logs`;

interface AuditEvent {
  user: { username: string };
  verb: string;
  requestReceivedTimestamp: string;
  objectRef?: { resource?: string; subresource?: string };
}

/** Pure: the requests of one user received in [fromMs, toMs), counted by "verb resource[/subresource]". */
export function requestsBy(lines: Iterable<string>, user: string, fromMs: number, toMs: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of lines) {
    if (!line.includes(user)) continue;
    const e = JSON.parse(line) as AuditEvent;
    const at = Date.parse(e.requestReceivedTimestamp);
    if (e.user.username !== user || at < fromMs || at >= toMs) continue;
    const what = `${e.verb} ${e.objectRef?.resource ?? '?'}${e.objectRef?.subresource ? `/${e.objectRef.subresource}` : ''}`;
    out.set(what, (out.get(what) ?? 0) + 1);
  }
  return out;
}

/** The node's kubelet's requests in [fromMs, toMs), from the audit log and its rotated backup. */
export function nodeRequests(node: string, fromMs: number, toMs: number): Map<string, number> {
  const lines = readdirSync(LOGS)
    .filter((f) => f.startsWith('kube-apiserver-audit'))
    .flatMap((f) => readFileSync(`${LOGS}/${f}`, 'utf8').split('\n'))
    .filter(Boolean);
  return requestsBy(lines, `system:node:${node}`, fromMs, toMs);
}

export const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
