// Container lifecycle hooks (postStart, preStop): exec in the container through CRI,
// an HTTP GET to the pod, or a sleep, as upstream's lifecycle handler runner (handlerRunner.Run).
// A hook that fails is reported by the caller: its message in the log and, for postStart, in the
// container's waiting state; the event (FailedPostStartHook / FailedPreStopHook) says only that
// it failed, as upstream, so that what a hook prints (a secret, say) stays off the apiserver's events.
import type { Container, LifecycleHandler, Pod } from 'kubernetes-types/core/v1.js';
import type { RuntimeClient } from '../cri/runtime-client.ts';
import { podRef, type Recorder } from '../events/recorder.ts';
import { HTTP_RESPONSE_TO_HTTPS, httpGet, httpProbeRequest, LIFECYCLE_USER_AGENT } from '../prober/http.ts';
import { goQuote } from '../log/go-quote.ts';
import { sleep } from '../backoff/backoff.ts';
import { formatPod } from '../podutil/podutil.ts';

/** What a hook runs through: CRI for exec, the pod's events and a counter for the HTTP fallback. */
export interface HookDeps {
  cri: Pick<RuntimeClient, 'execSync'>;
  events: Recorder;
  observe?: HookObserver;
}
export interface HookObserver {
  /** An HTTPS hook answered in plain HTTP succeeded over HTTP (kubelet_lifecycle_handler_http_fallbacks_total). */
  httpFallback?(): void;
  /** A sleep hook cut short (kubelet_sleep_action_terminated_early_total). */
  sleepTerminatedEarly?(): void;
}

export interface HookTarget {
  pod: Pod;
  container: Container;
  containerId: string;
  podIP?: string;
}

/**
 * Runs a hook, within timeoutSeconds when given (else until it ends, as upstream's runner runs
 * exec hooks with no timeout); resolves with why it failed, or undefined when it succeeded.
 * signal: the kill it belongs to was cancelled, which ends a sleep hook early (upstream's context).
 */
export async function runHook(
  d: HookDeps,
  t: HookTarget,
  h: LifecycleHandler,
  timeoutSeconds?: number,
  signal?: AbortSignal,
): Promise<string | undefined> {
  const where = `for Container "${t.container.name}" in Pod "${formatPod(t.pod)}" failed - error:`;
  const cmd = h.exec?.command ?? [];
  // RunInContainer's output: stdout, then stderr.
  const execFailed = (err: string, out = '') => `Exec lifecycle hook ([${cmd.join(' ')}]) ${where} ${err}, message: ${goQuote(out)}`;
  try {
    if (h.exec) {
      const r = await d.cri.execSync({ containerId: t.containerId, cmd, timeout: timeoutSeconds ?? 0 });
      if (r.exitCode === 0) return undefined;
      // The CRI client's error for a non-zero exit (ExecSync's CodeExitError).
      const err = `command '${cmd.join(' ')}' exited with ${r.exitCode}: ${r.stderr.toString('utf8')}`;
      return execFailed(err, Buffer.concat([r.stdout, r.stderr]).toString('utf8'));
    }
    if (h.httpGet) {
      const err = await httpHook(d, t, h.httpGet, timeoutSeconds);
      return err && `HTTP lifecycle hook (${h.httpGet.path ?? ''}) ${where} ${err}`;
    }
    if (h.sleep) {
      // upstream's runSleepHandler: a sleep the context ends early is an error, and counted.
      await sleep(Math.min(h.sleep.seconds, timeoutSeconds ?? Infinity) * 1000, signal);
      if (!signal?.aborted) return undefined;
      d.observe?.sleepTerminatedEarly?.();
      return `Sleep lifecycle hook (${h.sleep.seconds}) ${where} container terminated before sleep hook finished`;
    }
    return 'a lifecycle hook with no action';
  } catch (e) {
    const err = (e as Error).message;
    return h.exec ? execFailed(err) : `HTTP lifecycle hook (${h.httpGet?.path ?? ''}) ${where} ${err}`;
  }
}

/**
 * upstream's runHTTPHandler: the probe's request (kube-lifecycle User-Agent, TLS unverified,
 * same-host redirects); only a transport error fails the hook, whatever the status. An HTTPS
 * hook answered in plain HTTP is retried over HTTP, without the Authorization header; when that
 * succeeds, a LifecycleHTTPFallback warning on the pod says so (the hook is misconfigured).
 */
async function httpHook(
  d: HookDeps,
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
    const url = req.url.replace(/^https:/, 'http:');
    r = await httpGet({ url, headers }, deadline);
    if (!('error' in r)) {
      d.observe?.httpFallback?.();
      const host = new URL(url).host;
      d.events.event(
        podRef(t.pod),
        'Warning',
        'LifecycleHTTPFallback',
        `request to HTTPS lifecycle hook ${host} got HTTP response, retry with HTTP succeeded`,
      );
    }
  }
  if ('error' in r) return r.error;
  r.res.destroy();
  return undefined;
}
