// CSIDriver spec.tokenRequests (KEP 1855): at each NodePublishVolume the kubelet requests one
// service account token per listed audience, for the pod's service account and bound to the pod,
// and hands them to the driver as the volume context's csi.storage.k8s.io/serviceAccount.tokens
// (or in the publish secrets, with spec.serviceAccountTokenInSecrets). Pure: which requests, the
// JSON value, and where it goes; the requests themselves are made through the token manager
// (src/volumes/tokens.ts), as upstream's serviceAccountTokenGetter is the kubelet's token manager.
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { CSIDriver, CSIDriverSpec } from 'kubernetes-types/storage/v1.js';

/** The volume context key upstream's podServiceAccountTokenAttrs writes. */
export const SERVICE_ACCOUNT_TOKENS_KEY = 'csi.storage.k8s.io/serviceAccount.tokens';

/** CSIDriverSpec with the v1.36 fields the kubernetes-types package predates. */
export type CSIDriverSpecV136 = CSIDriverSpec & {
  /** v1.35+: the tokens go in NodePublishVolume's secrets instead of its volume context. */
  serviceAccountTokenInSecrets?: boolean;
  /** MutableCSINodeAllocatableCount (GA in v1.36): how often the kubelet refreshes CSINode allocatable.count. */
  nodeAllocatableUpdatePeriodSeconds?: number;
};

export const driverSpec = (d: CSIDriver | undefined): CSIDriverSpecV136 | undefined => d?.spec as CSIDriverSpecV136 | undefined;

/** One TokenRequest to make, as upstream's podServiceAccountTokenAttrs builds it. */
export interface PodTokenRequest {
  /** The key of its result in the JSON map ('' for the apiserver's own audience). */
  audience: string;
  namespace: string;
  serviceAccount: string;
  /** [] for the empty audience (the apiserver's default audiences), else [audience]. */
  audiences: string[];
  /** As the CSIDriver gives it; unset leaves the apiserver's default. */
  expirationSeconds?: number;
  podName: string;
  podUID: string;
}

/** Pure: upstream's podServiceAccountTokenAttrs' requests, one per tokenRequests entry in order; [] without a CSIDriver or tokenRequests. */
export function podTokenRequests(pod: Pod, driver: CSIDriver | undefined): PodTokenRequest[] {
  return (driver?.spec?.tokenRequests ?? []).map((r) => ({
    audience: r.audience,
    namespace: pod.metadata?.namespace ?? '',
    // The apiserver defaults serviceAccountName to "default" on create; the kubelet reads it as is.
    serviceAccount: pod.spec?.serviceAccountName ?? '',
    audiences: r.audience === '' ? [] : [r.audience],
    ...(r.expirationSeconds === undefined ? {} : { expirationSeconds: r.expirationSeconds }),
    podName: pod.metadata?.name ?? '',
    podUID: pod.metadata?.uid ?? '',
  }));
}

/** Go's encoding/json string escaping (HTML-safe, as json.Marshal writes it). */
function goJsonString(s: string): string {
  return JSON.stringify(s).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * Pure: the value of csi.storage.k8s.io/serviceAccount.tokens, byte for byte as upstream's
 * json.Marshal of map[audience]TokenRequestStatus: keys sorted, each {"token","expirationTimestamp"}
 * (the timestamp as the apiserver gave it, RFC 3339). A later audience of the same name wins, as
 * the map assignment does.
 */
export function serviceAccountTokensJson(results: { audience: string; token: string; expirationTimestamp: string }[]): string {
  const byAudience = new Map(results.map((r) => [r.audience, r]));
  // Go sorts map keys by their bytes: compare as UTF-8, not as UTF-16 code units.
  const keys = [...byAudience.keys()].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  const entries = keys.map((k) => {
    const r = byAudience.get(k)!;
    return `${goJsonString(k)}:{"token":${goJsonString(r.token)},"expirationTimestamp":${goJsonString(r.expirationTimestamp)}}`;
  });
  return `{${entries.join(',')}}`;
}

/**
 * Pure: upstream SetUpAt's merge of the token attribute: into the publish secrets when the
 * CSIDriver says serviceAccountTokenInSecrets, else into the volume context (overriding a
 * volumeAttribute of the same key, as mergeMap does). No tokens: both unchanged.
 */
export function withServiceAccountTokens(
  r: { volumeContext: Record<string, string>; secrets: Record<string, string> },
  tokensJson: string | undefined,
  driver: CSIDriver | undefined,
): { volumeContext: Record<string, string>; secrets: Record<string, string> } {
  if (tokensJson === undefined) return r;
  const attr = { [SERVICE_ACCOUNT_TOKENS_KEY]: tokensJson };
  return driverSpec(driver)?.serviceAccountTokenInSecrets
    ? { volumeContext: r.volumeContext, secrets: { ...r.secrets, ...attr } }
    : { volumeContext: { ...r.volumeContext, ...attr }, secrets: r.secrets };
}

/** Pure: upstream's csiPlugin.RequiresRemount: the CSIDriver asks for NodePublishVolume to be called again periodically. */
export const requiresRepublish = (driver: CSIDriver | undefined): boolean => driver?.spec?.requiresRepublish === true;
