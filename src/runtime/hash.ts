// A container's spec hash, kept in its io.kubernetes.container.hash annotation so that a
// changed spec is noticed after a kubelet restart: upstream's HashContainer, the same number,
// so a node moved between kubelet-ts and the upstream kubelet keeps its containers.
import { createHash } from 'node:crypto';
import type { Container } from 'kubernetes-types/core/v1.js';

/**
 * Go's json.Marshal of a string: JSON.stringify's, but for <, >, &, U+2028 and U+2029 escaped
 * (its HTML-safe default) and \b, \f as \u0008, \u000c.
 */
function goJSONString(s: string): string {
  const escapes: Record<string, string> = {
    '<': '\\u003c',
    '>': '\\u003e',
    '&': '\\u0026',
    '\u2028': '\\u2028',
    '\u2029': '\\u2029',
    '\\b': '\\u0008',
    '\\f': '\\u000c',
  };
  // An escape is matched whole, so that the b of an escaped backslash and b is left alone.
  return JSON.stringify(s).replace(/\\[\s\S]|[<>&\u2028\u2029]/g, (m) => escapes[m] ?? m);
}

/** FNV-1a, 32 bits (Go's hash/fnv New32a). */
function fnv32a(bytes: Uint8Array): number {
  let h = 0x811c9dc5;
  for (const b of bytes) h = Math.imul(h ^ b, 0x01000193) >>> 0;
  return h;
}

/**
 * Upstream's HashContainer (since 1.31): FNV-1a of DeepHashObject's printing ("%v" of
 * dump.ForHash, spew's "([]uint8)[123 34 ...]") of the JSON of {image, name} (the fields a
 * running pod's container can change in: its image), in hex.
 */
export function containerHash(c: Container): string {
  const json = Buffer.from(`{"image":${goJSONString(c.image ?? '')},"name":${goJSONString(c.name)}}`);
  return fnv32a(Buffer.from(`([]uint8)[${[...json].join(' ')}]`)).toString(16);
}

/** The hash kubelet-ts wrote before it took upstream's: containers made then are not restarted for it. */
function legacyHash(c: Container): string {
  const { name, image, command, args, workingDir, ports, env, envFrom, volumeMounts, securityContext, stdin, tty } = c;
  const text = JSON.stringify({ name, image, command, args, workingDir, ports, env, envFrom, volumeMounts, securityContext, stdin, tty });
  return createHash('sha256').update(text).digest('hex').slice(0, 8);
}

/** Whether a running container's hash says its spec is no longer c (upstream's containerChanged). */
export const hashChanged = (c: Container, hash: string): boolean => hash !== containerHash(c) && hash !== legacyHash(c);
