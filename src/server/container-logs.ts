// GET /containerLogs/NAMESPACE/POD/CONTAINER: what `kubectl logs` reaches through the
// apiserver. Checks the query and that the pod, container and log exist, then streams.
import { stat } from 'node:fs/promises';
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { Logger } from '../log/log.ts';
import { readContainerLog } from '../container-logs/reader.ts';
import { parseLogQuery } from './log-options.ts';
import { type Handler, reply, startReply } from './router.ts';

/** One container instance's log, as the kubelet knows it. */
export interface ContainerLog {
  path: string;
  /** Whether this instance still runs (and so may still write): following stops once it does not. */
  running(): boolean | Promise<boolean>;
}

export interface ContainerLogSource {
  pods(): Pod[];
  /** The current instance's log, or with `previous` the last terminated one's; undefined when there is none. */
  containerLog(namespace: string, pod: string, container: string, previous: boolean): Promise<ContainerLog | undefined>;
}

const hasContainer = (pod: Pod, name: string) =>
  [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? []), ...(pod.spec?.ephemeralContainers ?? [])].some(
    (c) => c.name === name,
  );

export function containerLogsHandler(src: ContainerLogSource, log: Logger): Handler {
  return async (req, res) => {
    const {
      podNamespace: namespace,
      podID: podName,
      containerName: container,
    } = req.params as {
      podNamespace: string;
      podID: string;
      containerName: string;
    };
    const fail = (status: number, message: string) => reply(res, status, 'text/plain', message);
    const q = parseLogQuery(req.query, Date.now());
    if ('message' in q) return fail(q.status, q.message);
    const pod = src.pods().find((p) => p.metadata?.namespace === namespace && p.metadata?.name === podName);
    if (!pod) return fail(404, `pod "${podName}" does not exist in namespace "${namespace}"`);
    if (!hasContainer(pod, container)) return fail(404, `container "${container}" not found in pod "${podName}"`);
    const target = await src.containerLog(namespace, podName, container, q.previous);
    if (!target) {
      return fail(
        404,
        q.previous
          ? `previous terminated container "${container}" in pod "${podName}" not found`
          : `container "${container}" in pod "${podName}" is waiting to start - no logs yet`,
      );
    }
    if (!(await stat(target.path).catch(() => undefined)))
      return fail(404, `log of container "${container}" in pod "${podName}" not found`);

    startReply(res, 200, 'text/plain');
    res.flushHeaders(); // a follower of a quiet container learns at once that the log exists
    try {
      await readContainerLog(target.path, res, q.options, { running: () => target.running() });
      res.end();
    } catch (e) {
      log.error('Failed to stream container log', { pod: `${namespace}/${podName}`, container, err: e });
      res.destroy();
    }
  };
}
