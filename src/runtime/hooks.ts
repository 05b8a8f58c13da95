// Container lifecycle hooks (postStart, preStop): exec in the container through CRI,
// an HTTP GET to the pod, or a sleep, as upstream's lifecycle handler runner. A hook
// that fails is reported (FailedPostStartHook / FailedPreStopHook) by the caller.
import type { Container, LifecycleHandler, Pod } from 'kubernetes-types/core/v1.js';
import type { RuntimeClient } from '../cri/runtime-client.ts';
import { resolveContainerPort } from '../prober/port.ts';

export interface HookTarget {
  pod: Pod;
  container: Container;
  containerId: string;
  podIP?: string;
}

/** Runs a hook within timeoutSeconds; resolves with why it failed, or undefined when it succeeded. */
export async function runHook(
  cri: Pick<RuntimeClient, 'execSync'>,
  t: HookTarget,
  h: LifecycleHandler,
  timeoutSeconds: number,
): Promise<string | undefined> {
  const podName = `${t.pod.metadata?.namespace}/${t.pod.metadata?.name}`;
  try {
    if (h.exec) {
      const cmd = h.exec.command ?? [];
      const r = await cri.execSync({ containerId: t.containerId, cmd, timeout: timeoutSeconds });
      if (r.exitCode === 0) return undefined;
      const out = Buffer.concat([r.stdout, r.stderr]).toString('utf8');
      return `Exec lifecycle hook (${JSON.stringify(cmd)}) for Container "${t.container.name}" in Pod "${podName}" failed - error: command '${cmd.join(' ')}' exited with ${r.exitCode}: ${out}`;
    }
    if (h.httpGet) {
      const url = hookURL(t, h.httpGet);
      if (typeof url !== 'string') return url.error;
      const res = await fetch(url, {
        headers: Object.fromEntries((h.httpGet.httpHeaders ?? []).map((x) => [x.name, x.value])),
        signal: AbortSignal.timeout(timeoutSeconds * 1000),
        redirect: 'follow',
      });
      await res.body?.cancel();
      // Upstream fails an HTTP hook on a transport error or a status outside 2xx/3xx.
      if (res.status >= 400)
        return `HTTP lifecycle hook (${h.httpGet.path ?? ''}) for Container "${t.container.name}" in Pod "${podName}" failed - error: HTTP status ${res.status}`;
      return undefined;
    }
    if (h.sleep) {
      await new Promise((r) => setTimeout(r, Math.min(h.sleep!.seconds, timeoutSeconds) * 1000));
      return undefined;
    }
    return 'a lifecycle hook with no action';
  } catch (e) {
    return `${h.exec ? 'Exec' : 'HTTP'} lifecycle hook for Container "${t.container.name}" in Pod "${podName}" failed - error: ${(e as Error).message}`;
  }
}

/** Pure: the URL of an httpGet hook (host defaults to the pod IP, a named port is looked up). */
export function hookURL(
  t: Pick<HookTarget, 'container' | 'podIP'>,
  g: NonNullable<LifecycleHandler['httpGet']>,
): string | { error: string } {
  // Named ports resolve as for probes (upstream shares probe.ResolveContainerPort).
  const port = resolveContainerPort(g.port, t.container);
  if (typeof port !== 'number') return port;
  const host = g.host || t.podIP;
  if (!host) return { error: 'the pod has no IP for the HTTP lifecycle hook' };
  const path = g.path ?? '';
  return `${(g.scheme ?? 'HTTP').toLowerCase()}://${host.includes(':') ? `[${host}]` : host}:${port}${path.startsWith('/') || !path ? path : `/${path}`}`;
}
