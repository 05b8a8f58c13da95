// upstream's DRAPluginManager.wipeResourceSlices: the ResourceSlices a DRA driver published for
// this node go when the kubelet starts (no driver has registered yet, and one that never comes
// back must not attract pods) and when a driver stays away past its grace period. Nobody can
// act on a failure, so it retries on its own, as upstream's backoff does, and then gives up.
import { type ApiClient, ApiError, isNotFound } from '../apiserver/client.ts';
import { apiPath } from '../apiserver/paths.ts';
import { jittered, sleep } from '../backoff/backoff.ts';
import type { Logger } from '../log/log.ts';

// upstream's wait.Backoff{Duration: 1s, Factor: 2, Jitter: 0.2, Cap: 5m}: the step that would
// pass the cap ends it, so ten attempts over about 8.5 minutes.
const FIRST_WAIT_MS = 1000;
const CAP_MS = 300_000;

/** The field selector of the node's slices, of one driver or (driver undefined) of all. */
export function sliceSelector(nodeName: string, driver?: string): string {
  return driver === undefined ? `spec.nodeName=${nodeName}` : `spec.driver=${driver},spec.nodeName=${nodeName}`;
}

export async function wipeResourceSlices(
  api: Pick<ApiClient, 'get' | 'delete'>,
  nodeName: string,
  driver: string | undefined,
  log: Logger,
  signal: AbortSignal,
): Promise<void> {
  const fieldSelector = sliceSelector(nodeName, driver);
  const collection = apiPath({ group: 'resource.k8s.io', resource: 'resourceslices' }, { fieldSelector });
  const attempt = async (): Promise<boolean> => {
    try {
      // Not before the Node exists: a kubelet still registering it cannot be allowed to delete them.
      await api.get(apiPath({ resource: 'nodes', name: nodeName }));
    } catch (e) {
      if (!isNotFound(e)) log.error('Unexpected error checking for node', { err: e });
      return false;
    }
    try {
      await api.delete(collection);
      log.v(3, 'Deleted ResourceSlices', { fieldSelector });
      return true;
    } catch (e) {
      if (isNotFound(e)) {
        log.v(5, 'ResourceSlices not found, nothing to delete.', { fieldSelector });
        return true;
      }
      // 401 while the kubelet is still getting its credentials.
      log.v(e instanceof ApiError && e.status === 401 ? 5 : 3, 'Deleting ResourceSlice failed, retrying', { fieldSelector, err: e });
      return false;
    }
  };
  for (let wait = FIRST_WAIT_MS; !signal.aborted; wait *= 2) {
    if ((await attempt()) || wait > CAP_MS) return;
    await sleep(jittered(wait, 0.2), signal);
  }
}
