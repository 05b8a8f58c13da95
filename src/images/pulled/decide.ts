// The decisions of upstream's PullManager (image_pull_manager.go), as pure functions over the
// records: may a pod use a present image without a pull (MustAttemptImagePull), and a pulled
// record with new credentials merged in (pulledRecordMergeNewCreds).
import type { ImagePullCredentials, ImagePulledRecord, ImagePullSecret, ImagePullServiceAccount } from './records.ts';
import { type Allowlist, requiresVerification, trimImageTagDigest, type VerificationPolicy } from './policy.ts';

/** Upstream's writeRecordWhileMatchingLimit: past it, matches are not written back (namespace churn). */
export const WRITE_WHILE_MATCHING_LIMIT = 100;

/** The pod's credentials for the image: its secrets' coordinates and hashes, and the token mode's service account. */
export interface PodCredentials {
  secrets: ImagePullSecret[];
  serviceAccount?: ImagePullServiceAccount;
}

export interface PresentImage {
  /** The container's image as the pod names it. */
  image: string;
  policy: VerificationPolicy;
  allowlist: Allowlist;
  /** A pull intent exists for the image (a pull began and its record may not be written yet). */
  intent: boolean;
  record: ImagePulledRecord | undefined;
  /** Undefined until asked for: the lookup runs the credential providers, so only when needed. */
  pod?: PodCredentials;
}

/**
 * pull: the kubelet must pull (again) with the pod's credentials; needPod: call again with the
 * pod's credentials; remember: a secret that matched by hash or by coordinates, to merge into
 * the record; why: upstream's result label of kubelet_imagemanager_image_mustpull_checks_total (checkResult*).
 */
export type Verdict =
  | {
      pull: boolean;
      needPod?: undefined;
      remember?: ImagePullSecret;
      why: 'credentialPolicyAllowed' | 'credentialRecordFound' | 'mustAuthenticate';
    }
  | { pull?: undefined; needPod: true };

/** Pure: upstream's MustAttemptImagePull for an image present on the node. */
export function mustPull(p: PresentImage): Verdict {
  const pulledByKubelet = p.record !== undefined || p.intent;
  if (!requiresVerification(p.policy, p.allowlist, p.image, pulledByKubelet)) return { pull: false, why: 'credentialPolicyAllowed' };
  if (!p.record) return { pull: true, why: 'mustAuthenticate' };
  let name: string;
  try {
    name = trimImageTagDigest(p.image);
  } catch {
    return { pull: true, why: 'mustAuthenticate' };
  }
  const cached = Object.hasOwn(p.record.credentialMapping, name) ? p.record.credentialMapping[name] : undefined;
  if (!cached) return { pull: true, why: 'mustAuthenticate' };
  if (cached.nodePodsAccessible) return { pull: false, why: 'credentialRecordFound' };
  const secrets = cached.kubernetesSecrets ?? [];
  const accounts = cached.kubernetesServiceAccounts ?? [];
  if (!secrets.length && !accounts.length) return { pull: true, why: 'mustAuthenticate' };
  if (!p.pod) return { needPod: true };
  const writeBack = secrets.length < WRITE_WHILE_MATCHING_LIMIT;
  for (const mine of p.pod.secrets) {
    for (const theirs of secrets) {
      // An empty hash is one that failed when recorded: it matches nothing.
      const sameHash = theirs.credentialHash.length > 0 && mine.credentialHash === theirs.credentialHash;
      const sameSecret = mine.uid === theirs.uid && mine.namespace === theirs.namespace && mine.name === theirs.name;
      // Same credentials in another secret: allowed, and that secret remembered too.
      if (sameHash) return { pull: false, why: 'credentialRecordFound', ...(!sameSecret && writeBack ? { remember: mine } : {}) };
      // The same secret with rotated credentials: allowed, and its new hash remembered. Upstream
      // allows this only while under the write-back limit.
      if (sameSecret && writeBack) return { pull: false, why: 'credentialRecordFound', remember: mine };
    }
  }
  const sa = p.pod.serviceAccount;
  if (sa && accounts.some((a) => a.uid === sa.uid && a.namespace === sa.namespace && a.name === sa.name)) {
    return { pull: false, why: 'credentialRecordFound' };
  }
  return { pull: true, why: 'mustAuthenticate' };
}

/**
 * Pure: upstream's writePulledRecordIfChanged on the record it read: the record to write, or
 * undefined when nothing changed. credentials undefined: pulled in unknown circumstances
 * (an intent found at start), tracked with no credentials so that every pod must verify.
 */
export function mergePulled(
  record: ImagePulledRecord | undefined,
  imageRef: string,
  imageName: string,
  credentials: ImagePullCredentials | undefined,
  nowMs: number,
): ImagePulledRecord | undefined {
  if (!record) {
    return { lastUpdatedTime: nowMs, imageRef, credentialMapping: credentials ? { [imageName]: credentials } : {} };
  }
  if (!credentials) return undefined;
  const secretsIn = credentials.kubernetesSecrets ?? [];
  const accountsIn = credentials.kubernetesServiceAccounts ?? [];
  if (!credentials.nodePodsAccessible && !secretsIn.length && !accountsIn.length) return undefined;
  const changed = (c: ImagePullCredentials): ImagePulledRecord => ({
    ...record,
    lastUpdatedTime: nowMs,
    credentialMapping: { ...record.credentialMapping, [imageName]: c },
  });
  const had = Object.hasOwn(record.credentialMapping, imageName) ? record.credentialMapping[imageName] : undefined;
  if (!had) return changed(credentials);
  if (had.nodePodsAccessible) return undefined;
  if (credentials.nodePodsAccessible) return changed({ nodePodsAccessible: true });
  // As upstream's switch: secrets when given, else service accounts.
  if (secretsIn.length) {
    const merged = mergeSecrets(had.kubernetesSecrets ?? [], secretsIn);
    return merged ? changed({ ...had, kubernetesSecrets: merged }) : undefined;
  }
  const merged = mergeAccounts(had.kubernetesServiceAccounts ?? [], accountsIn);
  return merged ? changed({ ...had, kubernetesServiceAccounts: merged }) : undefined;
}

const coords = (s: { namespace: string; name: string; uid: string }) => `${s.namespace}\u0000${s.name}\u0000${s.uid}`;
const byCoords = (a: { namespace: string; name: string; uid: string }, b: typeof a) =>
  cmp(a.namespace, b.namespace) || cmp(a.name, b.name) || cmp(a.uid, b.uid);
const cmp = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

// Unique by namespace/name/uid, the new hash winning, sorted; undefined when nothing changed.
function mergeSecrets(had: ImagePullSecret[], add: ImagePullSecret[]): ImagePullSecret[] | undefined {
  const set = new Map(had.map((s) => [coords(s), s]));
  let changed = false;
  for (const s of add) {
    if (set.get(coords(s))?.credentialHash !== s.credentialHash || !set.has(coords(s))) {
      changed = true;
      set.set(coords(s), { uid: s.uid, namespace: s.namespace, name: s.name, credentialHash: s.credentialHash });
    }
  }
  return changed ? [...set.values()].sort(byCoords) : undefined;
}

function mergeAccounts(had: ImagePullServiceAccount[], add: ImagePullServiceAccount[]): ImagePullServiceAccount[] | undefined {
  const set = new Map(had.map((s) => [coords(s), s]));
  let changed = false;
  for (const s of add) {
    if (!set.has(coords(s))) {
      changed = true;
      set.set(coords(s), { uid: s.uid, namespace: s.namespace, name: s.name });
    }
  }
  return changed ? [...set.values()].sort(byCoords) : undefined;
}
