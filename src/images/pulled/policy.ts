// imagePullCredentialsVerificationPolicy and preloadedImagesVerificationAllowlist: which
// present images a pod must prove its credentials for (upstream's image_pull_policies.go).
import { invalidReference } from '../reference.ts';

export const VERIFICATION_POLICIES = ['NeverVerify', 'NeverVerifyPreloadedImages', 'NeverVerifyAllowlistedImages', 'AlwaysVerify'] as const;
export type VerificationPolicy = (typeof VERIFICATION_POLICIES)[number];

/** An allowlist compiled: exact names, and the "registry/path/" prefixes of patterns ending "/*". */
export interface Allowlist {
  exact: ReadonlySet<string>;
  prefixes: readonly string[];
}

/**
 * Pure: upstream's RequireCredentialVerificationForImage. pulledByKubelet: a pulled record or
 * a pull intent exists for the image (it did not come preloaded).
 */
export function requiresVerification(policy: VerificationPolicy, allowlist: Allowlist, image: string, pulledByKubelet: boolean): boolean {
  switch (policy) {
    case 'NeverVerify':
      return false;
    case 'NeverVerifyPreloadedImages':
      return pulledByKubelet;
    case 'NeverVerifyAllowlistedImages':
      return !allowlisted(allowlist, image);
    case 'AlwaysVerify':
      return true;
  }
}

function allowlisted(a: Allowlist, image: string): boolean {
  // Best effort as upstream: an image that does not parse is matched as written.
  let name: string;
  try {
    name = trimImageTagDigest(image);
  } catch {
    name = image;
  }
  return a.exact.has(name) || a.prefixes.some((p) => name.startsWith(p));
}

/** Pure: the allowlist compiled; throws upstream's words on the first bad pattern (getAllowlistImagePattern). */
export function compileAllowlist(patterns: readonly string[]): Allowlist {
  const exact = new Set<string>();
  const prefixes: string[] = [];
  for (const p of patterns) {
    const { pattern, wildcard } = allowlistPattern(p);
    if (wildcard) prefixes.push(pattern);
    else exact.add(pattern);
  }
  return { exact, prefixes };
}

function allowlistPattern(pattern: string): { pattern: string; wildcard: boolean } {
  if (pattern !== pattern.trim()) throw new Error(`leading/trailing spaces are not allowed: ${pattern}`);
  const wildcard = pattern.endsWith('/*');
  const trimmed = wildcard ? pattern.slice(0, -1) : pattern;
  if (!trimmed) throw new Error(`the supplied pattern is too short: ${pattern}`);
  if (trimmed.includes('*')) throw new Error(`not a valid wildcard pattern, only patterns ending with '/*' are allowed: ${pattern}`);
  if (wildcard) {
    if (trimmed.length === 1) throw new Error('at least registry hostname is required');
    return { pattern: trimmed, wildcard };
  }
  let name: string;
  try {
    name = trimImageTagDigest(trimmed);
  } catch (e) {
    throw new Error(`failed to parse as an image name: ${(e as Error).message}`);
  }
  if (name !== trimmed) throw new Error(`neither tag nor digest is accepted in an image reference: ${pattern}`);
  return { pattern: trimmed, wildcard };
}

/**
 * Pure: upstream's trimImageTagDigest: the image as written without its tag and digest (no
 * normalisation: "busybox:1" is "busybox"). Throws when it is not a reference.
 */
export function trimImageTagDigest(image: string): string {
  const invalid = invalidReference(image);
  if (invalid) throw new Error(invalid);
  const at = image.indexOf('@');
  const name = at < 0 ? image : image.slice(0, at);
  const colon = name.lastIndexOf(':');
  return colon > name.lastIndexOf('/') ? name.slice(0, colon) : name;
}
