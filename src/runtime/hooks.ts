// Container lifecycle hooks (postStart, preStop): exec in the container through CRI,
// an HTTP GET to the pod, or a sleep, as upstream's lifecycle handler runner. A hook
// that fails is reported (FailedPostStartHook / FailedPreStopHook) by the caller.
import type { Container, LifecycleHandler, Pod } from 'kubernetes-types/core/v1.js';
import type { RuntimeClient } from '../cri/runtime-client.ts';
import { HTTP_RESPONSE_TO_HTTPS, httpGet, httpProbeRequest, LIFECYCLE_USER_AGENT } from '../prober/http.ts';
import { podKey } from '../podutil/podutil.ts';

export interface HookTarget {
  pod: Pod;
  container: Container;
  containerId: string;
  podIP?: string;
}

/**
 * Runs a hook, within timeoutSeconds when given (else until it ends, as upstream's runner runs
 * exec hooks with no timeout); resolves with why it failed, or undefined when it succeeded.
 */
export async function runHook(
  cri: Pick<RuntimeClient, 'execSync'>,
  t: HookTarget,
  h: LifecycleHandler,
  timeoutSeconds?: number,
): Promise<string | undefined> {
  const podName = podKey(t.pod);
  try {
    if (h.exec) {
      const cmd = h.exec.command ?? [];
      const r = await cri.execSync({ containerId: t.containerId, cmd, timeout: timeoutSeconds ?? 0 });
      if (r.exitCode === 0) return undefined;
      const out = Buffer.concat([r.stdout, r.stderr]).toString('utf8');
      return `Exec lifecycle hook (${JSON.stringify(cmd)}) for Container "${t.container.name}" in Pod "${podName}" failed - error: command '${cmd.join(' ')}' exited with ${r.exitCode}: ${out}`;
    }
    if (h.httpGet) {
      const err = await httpHook(t, h.httpGet, timeoutSeconds);
      return (
        err &&
        `HTTP lifecycle hook (${h.httpGet.path ?? ''}) for Container "${t.container.name}" in Pod "${podName}" failed - error: ${err}`
      );
    }
    if (h.sleep) {
      await new Promise((r) => setTimeout(r, Math.min(h.sleep!.seconds, timeoutSeconds ?? Infinity) * 1000));
      return undefined;
    }
    return 'a lifecycle hook with no action';
  } catch (e) {
    return `${h.exec ? 'Exec' : 'HTTP'} lifecycle hook for Container "${t.container.name}" in Pod "${podName}" failed - error: ${(e as Error).message}`;
  }
}

/**
 * upstream's runHTTPHandler: the probe's request (kube-lifecycle User-Agent, TLS unverified,
 * same-host redirects); only a transport error fails the hook, whatever the status. An HTTPS
 * hook answered in plain HTTP is retried over HTTP, without the Authorization header.
 */
async function httpHook(
  t: HookTarget,
  g: NonNullable<LifecycleHandler['httpGet']>,
  timeoutSeconds: number | undefined,
): Promise<string | undefined> {
  const req = httpProbeRequest(g, t.container, t.podIP, LIFECYCLE_USER_AGENT);
  if ('error' in req) return req.error;
  const deadline = timeoutSeconds === undefined ? new AbortController().signal : AbortSignal.timeout(timeoutSeconds * 1000);
  let r = await httpGet(req, deadline);
  if ('error' in r && r.error.endsWith(HTTP_RESPONSE_TO_HTTPS)) {
    const headers = req.headers.filter(([k]) => k !== 'Authorization');
    r = await httpGet({ url: req.url.replace(/^https:/, 'http:'), headers }, deadline);
  }
  if ('error' in r) return r.error;
  r.res.destroy();
  return undefined;
}
