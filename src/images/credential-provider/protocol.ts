// The exec protocol's messages (credentialprovider.kubelet.k8s.io): the CredentialProviderRequest
// on the plugin's stdin and the CredentialProviderResponse on its stdout, checked as upstream's
// execPlugin.ExecPlugin and decodeResponse (a strict decoder) check them.
import { parseDuration } from '../../apiserver/duration.ts';
import { PLUGIN_API_V1 } from './config.ts';

export interface PluginRequest {
  /** The image's repository, as the keyring looks it up (no tag or digest). */
  image: string;
  serviceAccountToken?: string;
  serviceAccountAnnotations?: Record<string, string>;
}

export interface PluginResponse {
  cacheKeyType: string;
  /** Milliseconds; undefined: the provider's defaultCacheDuration. */
  cacheDurationMs?: number;
  auth: Record<string, { username: string; password: string }>;
}

/**
 * The request in the provider's apiVersion, byte for byte as upstream's encoder writes it
 * (kind first, map keys sorted, a final newline); the token and annotations only exist in v1
 * (converting to the older versions drops them, as upstream's encoder does).
 */
export function encodeRequest(apiVersion: string, r: PluginRequest): string {
  const v1 = apiVersion === PLUGIN_API_V1;
  return `${JSON.stringify({
    kind: 'CredentialProviderRequest',
    apiVersion,
    image: r.image,
    ...(v1 && r.serviceAccountToken ? { serviceAccountToken: r.serviceAccountToken } : {}),
    ...(v1 && r.serviceAccountAnnotations && Object.keys(r.serviceAccountAnnotations).length
      ? {
          serviceAccountAnnotations: Object.fromEntries(
            Object.entries(r.serviceAccountAnnotations).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
          ),
        }
      : {}),
  })}\n`;
}

// What a strict decode of the response refuses gets one message: the response may hold credentials.
const DECODE_ERROR = 'error decoding credential provider plugin response from stdout';

/** The response, or throws with upstream's message. */
export function decodeResponse(apiVersion: string, stdout: string): PluginResponse {
  let o: unknown;
  try {
    o = JSON.parse(stdout);
  } catch (e) {
    // json.DefaultMetaFactory.Interpret's failure; the text never holds the output itself.
    throw new Error(`error reading GVK from response: ${(e as Error).message.replace(/, ".*$/s, '')}`);
  }
  if (!isObject(o)) throw new Error(DECODE_ERROR);
  const actual = typeof o.apiVersion === 'string' ? o.apiVersion : '';
  if (actual !== apiVersion)
    throw new Error(
      `apiVersion from credential plugin response did not match expected apiVersion:${apiVersion}, actual apiVersion:${actual}`,
    );
  if (o.kind !== 'CredentialProviderResponse') throw new Error(DECODE_ERROR);
  for (const k of Object.keys(o))
    if (!['kind', 'apiVersion', 'cacheKeyType', 'cacheDuration', 'auth'].includes(k)) throw new Error(DECODE_ERROR);
  const out: PluginResponse = { cacheKeyType: '', auth: {} };
  if (o.cacheKeyType !== undefined && o.cacheKeyType !== null) {
    if (typeof o.cacheKeyType !== 'string') throw new Error(DECODE_ERROR);
    out.cacheKeyType = o.cacheKeyType;
  }
  if (o.cacheDuration !== undefined && o.cacheDuration !== null) {
    const ms = typeof o.cacheDuration === 'string' ? parseDuration(o.cacheDuration) : undefined;
    if (ms === undefined) throw new Error(DECODE_ERROR);
    out.cacheDurationMs = ms;
  }
  if (o.auth !== undefined && o.auth !== null) {
    if (!isObject(o.auth)) throw new Error(DECODE_ERROR);
    for (const [key, entry] of Object.entries(o.auth)) {
      if (!isObject(entry)) throw new Error(DECODE_ERROR);
      for (const k of Object.keys(entry)) if (k !== 'username' && k !== 'password') throw new Error(DECODE_ERROR);
      const { username = '', password = '' } = entry;
      if (typeof username !== 'string' || typeof password !== 'string') throw new Error(DECODE_ERROR);
      out.auth[key] = { username, password };
    }
  }
  return out;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
