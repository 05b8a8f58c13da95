// What a container's environment reads from the apiserver: the ConfigMaps and Secrets its
// env and envFrom name (GET by name: the node authorizer lets a node read exactly those
// referenced by its pods), the Services of its namespace and default/kubernetes (from the
// service cache, service-cache.ts), and the node's allocatable. Each object is read once per
// sync. While the apiserver cannot be reached, the last answer read is used: upstream reads
// these from informer and watch caches, which go on serving through an outage, so that a
// container restarted then still starts (getServiceEnvVarMap, the configMap and secret managers).
import type { ConfigMap, Container, Node, Pod, Secret, Service } from 'kubernetes-types/core/v1.js';
import { ApiError, isNotFound, type ApiClient } from '../apiserver/client.ts';
import { envReferences, type EnvInputs, type Fetched } from './env.ts';
import { apiPath } from '../apiserver/paths.ts';
import { isStaticPod } from '../podutil/podutil.ts';
import type { ServiceLister } from './service-cache.ts';

export type EnvObjects = Omit<EnvInputs, 'podIPs' | 'hostIPs'>;

/** One sync's reads: the same object asked for twice in a sync is fetched once. */
export type EnvReads = (pod: Pod, c: Container) => Promise<EnvObjects>;

export interface EnvSource {
  /** Starts a sync: its reads are forgotten when it is done, so the next sync sees changes. */
  session(): EnvReads;
}

const path = (namespace: string, resource: string, name?: string) => apiPath({ resource, namespace, name });

/** Last answers kept for outages: one per object a pod of the node reads, bounded all the same. */
const LAST_KEPT = 1024;

/** The apiserver did not answer (unreachable, timed out, overloaded): an answer it gave before still stands. */
const unanswered = (e: unknown) => !(e instanceof ApiError) || e.status === 0 || e.status === 429 || e.status >= 500;

/**
 * Pure: the Services a pod's variables may name, from the cache: its namespace's when
 * enableServiceLinks, and default/kubernetes always. A pod from the apiserver waits for the
 * first list (upstream's makeEnvironmentVariables: without it KUBERNETES_SERVICE_HOST would be
 * missing); a static pod does not, as it may run the apiserver itself.
 */
export function podServices(pod: Pod, services: ServiceLister): Service[] | { error: string } {
  if (!isStaticPod(pod) && !services.synced()) return { error: 'services have not yet been read at least once, cannot construct envvars' };
  const ns = pod.metadata?.namespace ?? 'default';
  const kubernetes = services.inNamespace('default').filter((s) => s.metadata?.name === 'kubernetes');
  return (pod.spec?.enableServiceLinks ?? true) ? [...services.inNamespace(ns), ...kubernetes] : kubernetes;
}

/** The kubelet's client: node is the Node as last seen (its status.allocatable). */
export function apiEnvSource(api: Pick<ApiClient, 'get'>, node: () => Node | undefined, services: ServiceLister): EnvSource {
  const last = new Map<string, unknown>();
  const read = (p: string) =>
    api.get<unknown>(p).then(
      (found) => {
        last.delete(p);
        last.set(p, found);
        if (last.size > LAST_KEPT) last.delete(last.keys().next().value!);
        return found;
      },
      (e: unknown) => {
        if (unanswered(e) && last.has(p)) return last.get(p);
        if (!unanswered(e)) last.delete(p);
        throw e;
      },
    );
  return {
    session() {
      const cache = new Map<string, Promise<unknown>>();
      const once = <T>(p: string) => {
        if (!cache.has(p)) cache.set(p, read(p));
        return cache.get(p) as Promise<T>;
      };
      const fetched = <T>(p: string): Promise<Fetched<T>> =>
        once<T>(p).then(
          (found) => ({ found }),
          (e: unknown) => (isNotFound(e) ? { notFound: true as const } : { error: (e as Error).message }),
        );

      return async (pod, c) => {
        const ns = pod.metadata?.namespace ?? 'default';
        const refs = envReferences(c);
        const [configMaps, secrets] = await Promise.all([
          Promise.all(refs.configMaps.map(async (n) => [n, await fetched<ConfigMap>(path(ns, 'configmaps', n))] as const)),
          Promise.all(refs.secrets.map(async (n) => [n, await fetched<Secret>(path(ns, 'secrets', n))] as const)),
        ]);
        return {
          configMaps: new Map(configMaps),
          secrets: new Map(secrets),
          services: podServices(pod, services),
          allocatable: node()?.status?.allocatable,
        };
      };
    },
  };
}

/** Without an apiserver (upstream's kubelet with no kubeClient): no objects, no services. */
export const noEnvSource: EnvSource = {
  session: () => async () => ({ configMaps: new Map(), secrets: new Map(), services: [] }),
};
