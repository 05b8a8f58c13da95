// What a kubelet API request needs permission for, and asking the apiserver whether the
// user has it (authorization.mode Webhook). The mapping is upstream's
// nodeAuthorizerAttributesGetter with KubeletFineGrainedAuthz (on by default since 1.33):
// a request is allowed when any of its attributes is, tried in order.
import type { SubjectAccessReview } from 'kubernetes-types/authorization/v1.js';
import type { ApiClient } from '../apiserver/client.ts';
import { TtlCache } from './ttl-cache.ts';
import type { UserInfo } from './user.ts';
import { apiPath } from '../apiserver/paths.ts';

export interface Attributes {
  verb: string;
  apiGroup: '';
  apiVersion: 'v1';
  resource: 'nodes';
  subresource: string;
  /** The node's name. */
  name: string;
  path: string;
}

export interface Decision {
  allowed: boolean;
  reason?: string;
}

/** Rejects when the decision cannot be made (the apiserver is unreachable): 500. */
export type Authorizer = (user: UserInfo, attrs: Attributes) => Promise<Decision>;

const verbs: Record<string, string> = { GET: 'get', HEAD: 'get', POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: 'delete' };

// Upstream's isSubpath: the path itself or anything under it.
function isSubpath(path: string, prefix: string): boolean {
  const p = prefix.replace(/\/$/, '');
  return path === p || (path.startsWith(p) && path[p.length] === '/');
}

// Paths with their own subresource, checked before falling back to nodes/proxy.
const fineGrained: [string, string][] = [
  ['/pods', 'pods'],
  ['/healthz', 'healthz'],
  ['/configz', 'configz'],
  ['/runningpods/', 'pods'],
];
const own: [string, string][] = [
  ['/stats/', 'stats'],
  ['/metrics', 'metrics'],
  ['/logs/', 'log'],
  ['/checkpoint/', 'checkpoint'],
  // Upstream's getter checks these two in the second switch only, so neither also tries proxy;
  // /flagz is authorized as configz (pkg/kubelet/server/auth.go).
  ['/statusz', 'statusz'],
  ['/flagz', 'configz'],
];

/** Pure: the attributes to authorize for a request, in the order to try them. */
export function requestAttributes(nodeName: string, method: string, path: string): Attributes[] {
  const subresources = fineGrained
    .filter(([p]) => isSubpath(path, p))
    .slice(0, 1)
    .map(([, s]) => s);
  subresources.push(own.find(([p]) => isSubpath(path, p))?.[1] ?? 'proxy');
  return subresources.map((subresource) => ({
    verb: verbs[method.toUpperCase()] ?? '',
    apiGroup: '',
    apiVersion: 'v1',
    resource: 'nodes',
    subresource,
    name: nodeName,
    path,
  }));
}

/** Upstream's 403 body. */
export function forbiddenMessage(user: UserInfo, attrs: Attributes[]): string {
  return `Forbidden (user=${user.name}, verb=${attrs[0]!.verb}, resource=${attrs[0]!.resource}, subresource(s)=[${attrs.map((a) => a.subresource).join(' ')}])\n`;
}

export interface WebhookAuthorizerOptions {
  /** authorization.webhook.cacheAuthorizedTTL. */
  allowTTLMs?: number;
  /** authorization.webhook.cacheUnauthorizedTTL. */
  denyTTLMs?: number;
  now?: () => number;
}

/** SubjectAccessReviews through the apiserver, answers cached per user and attributes. */
export function webhookAuthorizer(api: Pick<ApiClient, 'create'>, o: WebhookAuthorizerOptions = {}): Authorizer {
  const cache = new TtlCache<Decision>(4096, o.now);
  return async (user, a) => {
    const spec = {
      user: user.name,
      uid: user.uid,
      groups: user.groups,
      extra: user.extra,
      resourceAttributes: {
        namespace: '',
        verb: a.verb,
        group: a.apiGroup,
        version: a.apiVersion,
        resource: a.resource,
        subresource: a.subresource,
        name: a.name,
      },
    };
    const key = JSON.stringify(spec);
    const hit = cache.get(key);
    if (hit) return hit;
    const sar = await api.create<SubjectAccessReview>(apiPath({ group: 'authorization.k8s.io', resource: 'subjectaccessreviews' }), {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec,
    });
    const decision: Decision = { allowed: sar.status?.allowed === true, reason: sar.status?.reason };
    cache.set(key, decision, decision.allowed ? (o.allowTTLMs ?? 300_000) : (o.denyTTLMs ?? 30_000));
    return decision;
  };
}
