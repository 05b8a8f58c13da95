// Who is calling the kubelet API, as upstream's delegating authenticator decides it: a
// client certificate signed by the client CA, else a bearer token the apiserver vouches
// for through a TokenReview (cached: upstream's authentication.webhook.cacheTTL, 2m, for
// both outcomes), else anonymous when enabled. Undefined means 401.
import { createHash, type X509Certificate } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { TokenReview } from 'kubernetes-types/authentication/v1.js';
import type { ApiClient } from '../apiserver/client.ts';
import type { Logger } from '../log/log.ts';
import { TtlCache } from './ttl-cache.ts';
import { anonymousUser, withAuthenticatedGroup, type UserInfo } from './user.ts';
import { certificateUser, parseCertBundle, peerChain, verifyClientChain } from './x509-authn.ts';
import { apiPath } from '../apiserver/paths.ts';

export type Authenticator = (req: IncomingMessage) => Promise<UserInfo | undefined>;

export interface AuthenticatorOptions {
  /**
   * PEM bundle of authentication.x509.clientCAFile, or what reads its current content (the file
   * is reloaded when it changes, src/certificates/dynamic-files.ts); without it client
   * certificates are ignored.
   */
  clientCA?: string | (() => string | undefined);
  /** For TokenReviews (authentication.webhook.enabled); without it bearer tokens are ignored. */
  api?: Pick<ApiClient, 'create'>;
  /** authentication.webhook.cacheTTL. */
  cacheTTLMs?: number;
  /** authentication.anonymous.enabled. */
  anonymous?: boolean;
  /** A client certificate's UID attribute is the user's UID (the AllowParsingUserUIDFromCertAuth gate). */
  uidFromCertificate?: boolean;
  log: Logger;
  now?: () => number;
}

export function kubeletAuthenticator(o: AuthenticatorOptions): Authenticator {
  const bundle = typeof o.clientCA === 'function' ? o.clientCA : () => o.clientCA as string | undefined;
  let parsed: { pem: string | undefined; roots: X509Certificate[] } = { pem: undefined, roots: [] };
  const roots = () => {
    const pem = bundle();
    if (pem !== parsed.pem) parsed = { pem, roots: pem ? parseCertBundle(pem) : [] };
    return parsed.roots;
  };
  const now = o.now ?? Date.now;
  const reviewToken = o.api ? tokenReviewer(o.api, o.cacheTTLMs ?? 120_000, now, o.log) : undefined;

  // A TLS connection's client certificate cannot change, and reading and verifying it was
  // over half of the kubelet's CPU under many kept-alive clients: once per connection, then
  // again after a minute (the certificate may expire meanwhile).
  // A new client CA bundle verifies every connection again.
  const verified = new WeakMap<object, { user: UserInfo | undefined; until: number; roots: X509Certificate[] }>();
  function certUser(req: IncomingMessage): UserInfo | undefined {
    const current = roots();
    if (current.length === 0) return undefined;
    const hit = verified.get(req.socket);
    if (hit && now() < hit.until && hit.roots === current) return hit.user;
    const user = verifyPeer(req, current);
    verified.set(req.socket, { user, until: now() + 60_000, roots: current });
    return user;
  }

  function verifyPeer(req: IncomingMessage, roots: X509Certificate[]): UserInfo | undefined {
    const chain = peerChain(req.socket);
    if (chain.length === 0) return undefined;
    const problem = verifyClientChain(chain, roots, new Date(now()));
    if (problem) {
      o.log.v(2, 'Client certificate rejected', { err: problem, remote: req.socket.remoteAddress });
      return undefined;
    }
    const user = certificateUser(chain[0]!, o.uidFromCertificate ?? true);
    if (!user) o.log.v(2, 'Client certificate names no user', { err: 'no CN, or more than one UID', remote: req.socket.remoteAddress });
    return user;
  }

  return async (req) => {
    const token = reviewToken && bearerToken(req.headers.authorization);
    const user = certUser(req) ?? (token ? await reviewToken(token) : undefined);
    if (user) return withAuthenticatedGroup(user);
    return o.anonymous ? anonymousUser : undefined;
  };
}

/** The token of an `Authorization: Bearer TOKEN` header, parsed as upstream's bearertoken. */
export function bearerToken(header: string | undefined): string | undefined {
  const parts = (header ?? '').trim().split(' ');
  return parts.length >= 2 && parts[0]!.toLowerCase() === 'bearer' && parts[1] ? parts[1] : undefined;
}

/** Asks the apiserver who a token belongs to; answers are cached, errors are not (they give 401). */
function tokenReviewer(
  api: Pick<ApiClient, 'create'>,
  ttlMs: number,
  now: () => number,
  log: Logger,
): (token: string) => Promise<UserInfo | undefined> {
  const cache = new TtlCache<UserInfo | null>(4096, now);
  const inflight = new Map<string, Promise<UserInfo | undefined>>();
  async function review(key: string, token: string): Promise<UserInfo | undefined> {
    let tr: TokenReview;
    try {
      tr = await api.create<TokenReview>(apiPath({ group: 'authentication.k8s.io', resource: 'tokenreviews' }), {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenReview',
        spec: { token },
      });
    } catch (e) {
      log.warn('Unable to authenticate the request due to an error', { err: e });
      return undefined;
    }
    const u = tr.status?.authenticated ? tr.status.user : undefined;
    const user = u?.username ? { name: u.username, uid: u.uid, groups: u.groups ?? [], extra: u.extra } : undefined;
    if (!user) log.v(2, 'Bearer token rejected', { err: tr.status?.error });
    cache.set(key, user ?? null, ttlMs);
    return user;
  }
  return (token) => {
    // Keyed by a hash so that the cache does not hold tokens.
    const key = createHash('sha256').update(token).digest('hex');
    const hit = cache.get(key);
    if (hit !== undefined) return Promise.resolve(hit ?? undefined);
    let p = inflight.get(key);
    if (!p) {
      p = review(key, token).finally(() => inflight.delete(key));
      inflight.set(key, p);
    }
    return p;
  };
}
