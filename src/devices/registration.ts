// Whether a device plugin's Register request is accepted, as upstream's plugin/v1beta1
// server.Register: a supported API version, an extended resource name, and an endpoint that
// is a socket inside the device plugin directory.
import { isAbsolute, join, relative } from 'node:path';

export const API_VERSION = 'v1beta1';
export const SUPPORTED_VERSIONS = [API_VERSION];

const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;

/** upstream's validation.IsQualifiedName: [prefix/]name, the prefix a DNS subdomain. */
function isQualifiedName(s: string): boolean {
  const parts = s.split('/');
  if (parts.length > 2) return false;
  const name = parts.at(-1)!;
  if (!name || name.length > 63 || !QUALIFIED_NAME.test(name)) return false;
  if (parts.length === 2) {
    const prefix = parts[0]!;
    if (!prefix || prefix.length > 253 || !DNS1123_SUBDOMAIN.test(prefix)) return false;
  }
  return true;
}

/**
 * upstream's v1helper.IsExtendedResourceName: a domain-prefixed name outside kubernetes.io,
 * not "requests.*", that stays a qualified name as a quota name ("requests." + name).
 */
export function isExtendedResourceName(name: string): boolean {
  if (!name.includes('/') || name.includes('kubernetes.io/') || name.startsWith('requests.')) return false;
  return isQualifiedName(`requests.${name}`);
}

export interface RegisterRequestLike {
  version: string;
  endpoint: string;
  resourceName: string;
}

/** The plugin's socket, or why the request is refused (upstream's messages). */
export function validateRegistration(r: RegisterRequestLike, pluginDir: string): { socket: string } | { error: string } {
  if (!SUPPORTED_VERSIONS.includes(r.version))
    return {
      error: `requested API version "${r.version}" is not supported by kubelet. Supported version is ["${SUPPORTED_VERSIONS.join('" "')}"]`,
    };
  if (!isExtendedResourceName(r.resourceName)) return { error: `the ResourceName "${r.resourceName}" is invalid` };
  const socket = join(pluginDir, r.endpoint);
  const rel = relative(pluginDir, socket);
  if (!r.endpoint || !rel || rel.startsWith('..') || isAbsolute(rel))
    return { error: `the endpoint "${r.endpoint}" is not a socket in the device plugin directory ${pluginDir}` };
  return { socket };
}
