// GET /runningpods/: what the runtime runs, not what the kubelet was asked to run (upstream's
// GetRunningPods): pods with a ready sandbox or a running container, as minimal Pods whose
// containers carry only a name and an image. Useful to spot pods the kubelet lost track of.
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { ContainerInfo, SandboxInfo } from '../stats/runtime-source.ts';
import { byCodeUnits } from '../podutil/podutil.ts';

/** Pure: the running pods, ordered by namespace and name. */
export function runningPods(sandboxes: SandboxInfo[], containers: ContainerInfo[]): Pod[] {
  const pods = new Map<string, Pod>();
  const entry = (uid: string, name: string, namespace: string) => {
    let p = pods.get(uid);
    if (!p) pods.set(uid, (p = { metadata: { name, namespace, uid }, spec: { containers: [] } }));
    return p;
  };
  for (const s of sandboxes) if (s.ready) entry(s.uid, s.name, s.namespace);
  // A running container whose sandbox is gone still runs: its pod is listed from its labels.
  for (const c of containers)
    if (c.running) entry(c.podUid, c.podName, c.podNamespace).spec!.containers.push({ name: c.name, image: c.image });
  for (const p of pods.values()) p.spec!.containers.sort((a, b) => byCodeUnits(a.name, b.name));
  return [...pods.values()].sort((a, b) =>
    byCodeUnits(`${a.metadata!.namespace}/${a.metadata!.name}`, `${b.metadata!.namespace}/${b.metadata!.name}`),
  );
}
