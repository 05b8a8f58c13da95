// Service account tokens for projected volumes, from the TokenRequest API, cached and
// renewed as upstream's token manager: when 80% of the lifetime has passed (less a
// jitter of up to 10 s), or after 24 h whatever the lifetime.
import type { TokenRequest } from 'kubernetes-types/authentication/v1.js';
import { apiserverBehind, behindWaits } from '../apiserver/client.ts';
import { sleep } from '../backoff/backoff.ts';

/** POST /api/v1/namespaces/NS/serviceaccounts/SA/token. */
export type RequestToken = (namespace: string, serviceAccount: string, req: TokenRequest) => Promise<TokenRequest>;

const MAX_TTL_MS = 24 * 3600_000;
const MAX_JITTER_MS = 10_000;

/** Pure: whether a token issued as tr must be renewed at now. */
export function requiresRefresh(tr: TokenRequest, nowMs: number, jitterMs: number): boolean {
  const ttl = tr.spec.expirationSeconds;
  const exp = tr.status?.expirationTimestamp ? Date.parse(tr.status.expirationTimestamp) : NaN;
  if (!ttl || Number.isNaN(exp)) return true;
  const iat = exp - ttl * 1000;
  if (nowMs > iat + MAX_TTL_MS - jitterMs) return true;
  return nowMs > exp - Math.floor((ttl * 20) / 100) * 1000 - jitterMs;
}

export interface TokenKey {
  namespace: string;
  serviceAccount: string;
  audience?: string;
  /** Unset: the apiserver's default (an hour), as the credential providers' requests leave it. */
  expirationSeconds?: number;
  podName: string;
  podUID: string;
  /** The service account's UID the token must be for (metadata.uid), as credential providers ask. */
  serviceAccountUID?: string;
}

export class TokenManager {
  readonly #request: RequestToken;
  readonly #cache = new Map<string, TokenRequest>();
  readonly #now: () => number;
  readonly #wait: (ms: number) => Promise<void>;

  constructor(request: RequestToken, now = Date.now, wait = sleep) {
    this.#request = request;
    this.#now = now;
    this.#wait = wait;
  }

  async token(k: TokenKey): Promise<string> {
    return (await this.tokenStatus(k)).token;
  }

  /**
   * The token and when it expires (upstream's GetServiceAccountToken's status), from the cache
   * while fresh: what CSIDriver tokenRequests hand a driver (src/csi/service-account-tokens.ts).
   */
  async tokenStatus(k: TokenKey): Promise<{ token: string; expirationTimestamp: string }> {
    const key = JSON.stringify([
      k.namespace,
      k.serviceAccount,
      k.audience ?? '',
      k.expirationSeconds ?? 0,
      k.podName,
      k.podUID,
      k.serviceAccountUID ?? '',
    ]);
    const cached = this.#cache.get(key);
    if (cached && !requiresRefresh(cached, this.#now(), Math.random() * MAX_JITTER_MS)) return cached.status!;
    try {
      const tr = await this.#requestOnceKnown(k.namespace, k.serviceAccount, {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        ...(k.serviceAccountUID ? { metadata: { uid: k.serviceAccountUID } } : {}),
        spec: {
          ...(k.audience ? { audiences: [k.audience] } : { audiences: [] }),
          ...(k.expirationSeconds === undefined ? {} : { expirationSeconds: k.expirationSeconds }),
          boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: k.podName, uid: k.podUID },
        },
      });
      this.#cache.set(key, tr);
      return tr.status!;
    } catch (e) {
      // Upstream keeps serving a token that is still valid when its renewal fails.
      if (cached && Date.parse(cached.status!.expirationTimestamp) > this.#now()) return cached.status!;
      throw e;
    }
  }

  /** The request, tried again a moment later while the apiserver is behind the pod (apiserverBehind). */
  async #requestOnceKnown(namespace: string, serviceAccount: string, req: TokenRequest): Promise<TokenRequest> {
    const again = behindWaits();
    for (;;) {
      try {
        return await this.#request(namespace, serviceAccount, req);
      } catch (e) {
        const wait = apiserverBehind(e) ? again() : undefined;
        if (wait === undefined) throw e;
        await this.#wait(wait);
      }
    }
  }

  /** Drops the tokens bound to a pod that is gone. */
  forget(podUID: string): void {
    for (const k of this.#cache.keys()) if (JSON.parse(k)[5] === podUID) this.#cache.delete(k);
  }
}
