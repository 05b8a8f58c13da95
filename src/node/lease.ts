// The node's heartbeat: a Lease in kube-node-lease, renewed every quarter of its
// duration (10 s of 40 s). The node lifecycle controller marks the node unknown when
// it expires, so renewal retries quickly with backoff and never waits on pod work.
import type { Lease } from 'kubernetes-types/coordination/v1.js';
import { type ApiClient, isNotFound } from '../apiserver/client.ts';
import { backoff, jittered, sleep } from '../backoff/backoff.ts';
import type { Logger } from '../log/log.ts';
import { apiPath } from '../apiserver/paths.ts';
import { microTime } from '../apiserver/time.ts';

/** Pure: the lease we want, built on the one that exists (keeping its resourceVersion). */
export function desiredLease(nodeName: string, nodeUID: string | undefined, durationSeconds: number, now: Date, existing?: Lease): Lease {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: {
      ...existing?.metadata,
      name: nodeName,
      namespace: LEASE_NAMESPACE,
      ownerReferences: nodeUID ? [{ apiVersion: 'v1', kind: 'Node', name: nodeName, uid: nodeUID }] : existing?.metadata?.ownerReferences,
    },
    spec: { ...existing?.spec, holderIdentity: nodeName, leaseDurationSeconds: durationSeconds, renewTime: microTime(now) },
  };
}

const LEASE_NAMESPACE = 'kube-node-lease';

export interface LeaseRenewer {
  stop(): void;
}

export function leaseRenewer(
  api: ApiClient,
  opts: {
    nodeName: string;
    durationSeconds: number;
    nodeUID: () => string | undefined;
    log: Logger;
    onRenew?: (ok: boolean) => void;
  },
): LeaseRenewer {
  const abort = new AbortController();
  const path = apiPath({ group: 'coordination.k8s.io', resource: 'leases', namespace: LEASE_NAMESPACE, name: opts.nodeName });
  const retry = backoff(200, 7000);
  let cached: Lease | undefined;

  async function renewOnce() {
    const now = new Date();
    if (!cached) {
      try {
        cached = await api.get<Lease>(path);
      } catch (e) {
        if (!isNotFound(e)) throw e;
        cached = await api.create<Lease>(
          apiPath({ group: 'coordination.k8s.io', resource: 'leases', namespace: LEASE_NAMESPACE }),
          desiredLease(opts.nodeName, opts.nodeUID(), opts.durationSeconds, now),
        );
        return;
      }
    }
    try {
      cached = await api.replace<Lease>(path, desiredLease(opts.nodeName, opts.nodeUID(), opts.durationSeconds, now, cached));
    } catch (e) {
      cached = undefined; // re-read on the next try: it changed, vanished, or we cannot tell
      throw e;
    }
  }

  (async () => {
    const interval = (opts.durationSeconds * 1000) / 4;
    while (!abort.signal.aborted) {
      try {
        await renewOnce();
        retry.reset();
        opts.onRenew?.(true);
        await sleep(jittered(interval, 0.04), abort.signal);
      } catch (e) {
        opts.onRenew?.(false);
        const wait = retry.next();
        opts.log.warn('Failed to update lease, will retry', { node: opts.nodeName, err: e, retryInMs: wait });
        await sleep(wait, abort.signal);
      }
    }
  })();
  return { stop: () => abort.abort() };
}
