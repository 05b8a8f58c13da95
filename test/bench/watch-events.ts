// The watch events the apiserver sends while a kubelet runs the bench's pods, from its own
// apiserver_watch_events_total (by resource; the metric has no client label). Every status write a
// kubelet makes is sent to every watcher of that pod (the controllers, the scheduler, the
// kubelet itself and the bench's watch): the workload being the same for both kubelets, the
// difference between their runs is what each one's writes cost the control plane in events.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ROOT } from './lib.ts';

const execFileP = promisify(execFile);

/** Pure: apiserver_watch_events_total by resource ("pods", "leases.coordination.k8s.io"), in Prometheus' text format; older releases label it by kind. */
export function watchEventsByResource(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of text.matchAll(/^apiserver_watch_events_total\{([^}]*)\} (\S+)$/gm)) {
    const labels = Object.fromEntries([...m[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    const what = labels.resource ?? labels.kind ?? '?';
    const kind = labels.group ? `${what}.${labels.group}` : what;
    out.set(kind, (out.get(kind) ?? 0) + Number(m[2]));
  }
  return out;
}

/** Pure: what each series grew by between two readings, those that did not move left out, most first. */
export function grewBy(before: Map<string, number>, after: Map<string, number>): Map<string, number> {
  const out: [string, number][] = [];
  for (const [k, n] of after) if (n - (before.get(k) ?? 0) > 0) out.push([k, n - (before.get(k) ?? 0)]);
  return new Map(out.sort((a, b) => b[1] - a[1]));
}

/** The apiserver's watch events by resource now (its /metrics, as the admin). */
export async function apiserverWatchEvents(): Promise<Map<string, number>> {
  const { stdout } = await execFileP(
    `${ROOT}/_output/bin/kubectl`,
    ['--kubeconfig', `${ROOT}/_output/local/admin.kubeconfig`, 'get', '--raw', '/metrics'],
    { maxBuffer: 64 << 20 },
  );
  return watchEventsByResource(stdout);
}
