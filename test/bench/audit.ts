// What a kubelet asks of the apiserver, from the apiserver's audit log of the nodes' requests
// (hack/control-plane.sh logs system:nodes at the Metadata level): apiserver_request_total has
// no client label, and every request a kubelet makes is multiplied by the nodes of a cluster.
import { readFileSync, readdirSync } from 'node:fs';
import { ROOT } from './lib.ts';

const LOGS = `${ROOT}/_output/local/logs`;

/** "VERB resource[/subresource]" -> count. */
export type RequestCounts = Map<string, number>;

interface AuditEvent {
  auditID: string;
  user: { username: string };
  verb: string;
  requestReceivedTimestamp: string;
  objectRef?: { resource?: string; subresource?: string };
}

/**
 * Pure: the requests of one user (with `prefix`, of every user whose name starts with `user`)
 * received in [fromMs, toMs), counted by "verb resource[/subresource]". A watch is logged twice, at
 * ResponseStarted and ResponseComplete (the policies omit only RequestReceived): one auditID is one request.
 */
export function requestsBy(lines: Iterable<string>, user: string, fromMs: number, toMs: number, prefix = false): RequestCounts {
  const out: RequestCounts = new Map();
  const seen = new Set<string>();
  for (const line of lines) {
    if (!line.includes(user)) continue;
    const e = JSON.parse(line) as AuditEvent;
    const at = Date.parse(e.requestReceivedTimestamp);
    const mine = prefix ? e.user.username.startsWith(user) : e.user.username === user;
    if (!mine || at < fromMs || at >= toMs || seen.has(e.auditID)) continue;
    seen.add(e.auditID);
    const what = `${e.verb} ${e.objectRef?.resource ?? '?'}${e.objectRef?.subresource ? `/${e.objectRef.subresource}` : ''}`;
    out.set(what, (out.get(what) ?? 0) + 1);
  }
  return out;
}

/** The node's kubelet's requests in [fromMs, toMs), from the audit log and its rotated backup. */
export function nodeRequests(node: string, fromMs: number, toMs: number): RequestCounts {
  const lines = readdirSync(LOGS)
    .filter((f) => f.startsWith('kube-apiserver-audit'))
    .flatMap((f) => readFileSync(`${LOGS}/${f}`, 'utf8').split('\n'))
    .filter(Boolean);
  return requestsBy(lines, `system:node:${node}`, fromMs, toMs);
}

export const total = (c: RequestCounts): number => [...c.values()].reduce((a, b) => a + b, 0);
