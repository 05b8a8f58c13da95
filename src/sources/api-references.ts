// What a static pod may not name (upstream's podutil.HasAPIObjectReference, checked by the
// file and http sources with PreventStaticPodAPIReferences, beta and on): a static pod runs
// before and without the apiserver, and its mirror pod cannot be given access to API objects,
// so one that names a service account, a secret, a config map, a claim or a volume type that
// reads the API is refused as a whole. Pure.
import type { Container, EnvFromSource, EnvVar, Pod, Volume } from 'kubernetes-types/core/v1.js';

/** Volume types that need nothing of the API (upstream's first case). */
const API_FREE = [
  'awsElasticBlockStore',
  'azureDisk',
  'cephfs',
  'cinder',
  'downwardAPI',
  'emptyDir',
  'fc',
  'flexVolume',
  'flocker',
  'gcePersistentDisk',
  'gitRepo',
  'hostPath',
  'image',
  'iscsi',
  'nfs',
  'photonPersistentDisk',
  'portworxVolume',
  'quobyte',
  'rbd',
  'scaleIO',
  'storageos',
  'vsphereVolume',
];

const containers = (pod: Pod): Container[] => [
  ...(pod.spec?.initContainers ?? []),
  ...(pod.spec?.containers ?? []),
  ...((pod.spec?.ephemeralContainers ?? []) as Container[]),
];
const envOf = (c: Container): EnvVar[] => c.env ?? [];
const envFromOf = (c: Container): EnvFromSource[] => c.envFrom ?? [];

/** Upstream's VisitPodSecretNames: pull secrets, env, and the secret references of volumes. */
function namesSecret(pod: Pod): boolean {
  if (pod.spec?.imagePullSecrets?.length) return true;
  for (const c of containers(pod)) {
    if (envFromOf(c).some((e) => e.secretRef)) return true;
    if (envOf(c).some((e) => e.valueFrom?.secretKeyRef)) return true;
  }
  const refs = (v: Volume) => {
    const x = v as unknown as Record<string, { secretRef?: unknown } | undefined>;
    return (
      !!v.secret ||
      !!v.azureFile ||
      !!v.projected?.sources?.some((s) => s.secret) ||
      ['cephfs', 'cinder', 'flexVolume', 'rbd', 'scaleIO', 'storageos', 'iscsi'].some((k) => x[k]?.secretRef) ||
      !!v.csi?.nodePublishSecretRef
    );
  };
  return (pod.spec?.volumes ?? []).some(refs);
}

/** Upstream's VisitPodConfigmapNames: env, and config map volumes (plain and projected). */
function namesConfigMap(pod: Pod): boolean {
  for (const c of containers(pod)) {
    if (envFromOf(c).some((e) => e.configMapRef)) return true;
    if (envOf(c).some((e) => e.valueFrom?.configMapKeyRef)) return true;
  }
  return (pod.spec?.volumes ?? []).some((v) => v.configMap || v.projected?.sources?.some((s) => s.configMap));
}

/** A projected volume's sources: the first that needs the API, or an error for one unknown. */
function projectedReference(v: Volume): { resource: string } | { error: string } | undefined {
  for (const s of v.projected?.sources ?? []) {
    const x = s as Record<string, unknown>;
    if (s.configMap) return { resource: 'configmaps (via projected volumes)' };
    if (s.secret) return { resource: 'secrets (via projected volumes)' };
    if (s.serviceAccountToken) return { resource: 'serviceaccounts (via projected volumes)' };
    if (s.clusterTrustBundle) return { resource: 'clustertrustbundles' };
    if (x.podCertificate) return { resource: 'podcertificates' };
    if (s.downwardAPI) continue;
    return { error: `unknown source for projected volume "${v.name}"` };
  }
  return undefined;
}

const VOLUME_REFERENCES: [keyof Volume | 'glusterfs', string][] = [
  ['configMap', 'configmaps (via configmap volumes)'],
  ['secret', 'secrets (via secret volumes)'],
  ['csi', 'csidrivers (via CSI volumes)'],
  ['glusterfs', 'endpoints (via glusterFS volumes)'],
  ['persistentVolumeClaim', 'persistentvolumeclaims'],
  ['ephemeral', 'persistentvolumeclaims (via ephemeral volumes)'],
  ['azureFile', 'secrets (via azureFile volumes)'],
];

/**
 * Upstream's HasAPIObjectReference: the kind of API object the pod names first (as upstream
 * words it, "secrets (via secret volumes)"), an error for a volume it cannot tell, or undefined.
 */
export function apiObjectReference(pod: Pod): { resource: string } | { error: string } | undefined {
  if (pod.spec?.serviceAccountName) return { resource: 'serviceaccounts' };
  if (namesSecret(pod)) return { resource: 'secrets' };
  if (namesConfigMap(pod)) return { resource: 'configmaps' };
  if (pod.spec?.resourceClaims?.length) return { resource: 'resourceclaims' };
  for (const v of pod.spec?.volumes ?? []) {
    const x = v as unknown as Record<string, unknown>;
    // No source at all: the API's defaulting makes it an emptyDir (SetDefaults_Volume).
    if (API_FREE.some((k) => x[k] !== undefined) || Object.keys(v).every((k) => k === 'name')) continue;
    const known = VOLUME_REFERENCES.find(([k]) => x[k] !== undefined);
    if (known) return { resource: known[1] };
    if (v.projected) {
      const r = projectedReference(v);
      if (r) return r;
      continue;
    }
    return { error: `unknown volume type for volume  "${v.name}"` };
  }
  return undefined;
}
