// A pod's RuntimeClass names the runtime handler its sandbox runs with (upstream's
// runtimeclass.Manager). Read from the apiserver when a sandbox is made, which is rare; the
// errors read as upstream's lookup words them, and fail the sandbox.
import { type ApiClient, isNotFound } from '../apiserver/client.ts';
import { apiPath } from '../apiserver/paths.ts';

export function apiRuntimeHandler(api: Pick<ApiClient, 'get'>): (runtimeClassName: string) => Promise<string> {
  return async (name) => {
    try {
      return (await api.get<{ handler: string }>(apiPath({ group: 'node.k8s.io', resource: 'runtimeclasses', name }))).handler;
    } catch (e) {
      throw new Error(
        isNotFound(e) ? `runtimeclasses.node.k8s.io "${name}" not found` : `failed to lookup RuntimeClass ${name}: ${(e as Error).message}`,
      );
    }
  };
}
