// The cluster's Services, for the service link variables of containers (FOO_SERVICE_HOST, ...):
// one list and watch of all of them, as upstream's kubelet keeps a service informer
// (NewKubelet's serviceLister), instead of a LIST and a GET per container start. Each Service
// is kept trimmed to what the variables need, so a cluster of many Services costs a node little.
import type { Service } from 'kubernetes-types/core/v1.js';
import type { ApiClient } from '../apiserver/client.ts';
import { apiPath } from '../apiserver/paths.ts';
import { reflector } from '../apiserver/reflector.ts';
import type { Logger } from '../log/log.ts';

/** What the environment of a container reads. */
export interface ServiceLister {
  /** Listed at least once (upstream's serviceHasSynced): until then a Service may just not be read yet. */
  synced(): boolean;
  /** The Services of a namespace. */
  inNamespace(ns: string): Service[];
}

/** Pure: a Service as the link variables use it: its name, namespace, cluster IP and ports. */
export function trimService(s: Service): Service {
  return {
    metadata: { name: s.metadata?.name, namespace: s.metadata?.namespace },
    spec: {
      clusterIP: s.spec?.clusterIP,
      ports: (s.spec?.ports ?? []).map((p) => ({ name: p.name, port: p.port, protocol: p.protocol })),
    },
  };
}

export function serviceCache(api: ApiClient, log: Logger): ServiceLister & { stop(): void } {
  const byNamespace = new Map<string, Map<string, Service>>();
  let synced = false;
  const set = (s: Service) => {
    const ns = s.metadata?.namespace ?? '';
    let m = byNamespace.get(ns);
    if (!m) byNamespace.set(ns, (m = new Map()));
    m.set(s.metadata?.name ?? '', trimService(s));
  };
  const remove = (s: Service) => {
    const ns = s.metadata?.namespace ?? '';
    const m = byNamespace.get(ns);
    m?.delete(s.metadata?.name ?? '');
    if (m?.size === 0) byNamespace.delete(ns);
  };
  const r = reflector<Service>(
    api,
    apiPath({ resource: 'services' }),
    'services',
    {
      list(items) {
        byNamespace.clear();
        items.forEach(set);
        synced = true;
      },
      event: (type, s) => (type === 'DELETED' ? remove(s) : set(s)),
    },
    log,
  );
  return {
    stop: r.stop,
    synced: () => synced,
    inNamespace: (ns) => [...(byNamespace.get(ns)?.values() ?? [])],
  };
}
