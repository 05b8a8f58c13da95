// projected (upstream's pkg/volume/projected): secrets, configMaps, downward API fields and
// service account tokens in one tmpfs, rewritten while the pod runs.
import type { Pod, Volume } from 'kubernetes-types/core/v1.js';
import { type Payload, DEFAULT_MODE, aggregate, downwardAPIPayload } from '../payload.ts';
import { configMapFiles, secretFiles, setUpApiData } from './api-data.ts';
import { PROJECTED } from './names.ts';
import type { VolumePlugin } from './plugin.ts';
import type { PodVolumeHost } from './pod-host.ts';

/** Upstream's projected collectData: each source is tried, the errors aggregated. */
async function collectData(host: PodVolumeHost, pod: Pod, v: Volume): Promise<Payload> {
  const ns = pod.metadata!.namespace ?? 'default';
  const mode = v.projected!.defaultMode ?? DEFAULT_MODE;
  const out: Payload = new Map();
  const errors: string[] = [];
  // Fetched side by side (token, CA, ...); merged in the order of the sources, as upstream.
  const parts = await Promise.all(
    (v.projected!.sources ?? []).map(async (src): Promise<Payload | Error> => {
      try {
        let part: Payload = new Map();
        if (src.secret) part = await secretFiles(host, pod, { ...src.secret, name: src.secret.name! }, mode);
        else if (src.configMap) part = await configMapFiles(host, pod, src.configMap, mode);
        else if (src.downwardAPI) part = downwardAPIPayload(pod, src.downwardAPI.items, mode, host.allocatable() ?? {});
        else if (src.serviceAccountToken) {
          const t = src.serviceAccountToken;
          const token = await host.tokens.token({
            namespace: ns,
            serviceAccount: pod.spec?.serviceAccountName || 'default',
            audience: t.audience,
            expirationSeconds: t.expirationSeconds ?? 3600,
            podName: pod.metadata!.name!,
            podUID: pod.metadata!.uid!,
          });
          // Under fsGroup 0600, which the ownership change makes 0640 (upstream).
          part.set(t.path, { data: Buffer.from(token), mode: pod.spec?.securityContext?.fsGroup !== undefined ? 0o600 : mode });
        }
        return part;
      } catch (e) {
        return e as Error;
      }
    }),
  );
  for (const part of parts) {
    if (part instanceof Error) errors.push(part.message);
    else for (const [k, f] of part) out.set(k, f);
  }
  if (errors.length) throw new Error(aggregate(errors));
  return out;
}

export const projectedPlugin: VolumePlugin<PodVolumeHost> = {
  name: PROJECTED,
  canSupport: (s) => !s.pv && !!s.volume.projected,
  requiresRemount: true,
  setUp: (host, pod, { volume: v }) => setUpApiData(host, pod, v, PROJECTED, true, () => collectData(host, pod, v)),
};
