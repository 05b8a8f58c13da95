// A pod's spec.imagePullSecrets, read from the apiserver when an image is to be pulled.
// The node authorizer lets a node read exactly the secrets its pods reference.
import type { Pod, Secret } from 'kubernetes-types/core/v1.js';
import type { ApiClient } from '../apiserver/client.ts';
import { apiPath } from '../apiserver/paths.ts';

/** Reads one secret; rejects when it cannot (missing, forbidden, apiserver down). */
export type SecretGetter = (namespace: string, name: string) => Promise<Secret>;

export function apiSecretGetter(api: Pick<ApiClient, 'get'>): SecretGetter {
  return (namespace, name) => api.get<Secret>(apiPath({ resource: 'secrets', namespace, name }));
}

export interface PullSecrets {
  secrets: Secret[];
  failed: { name: string; err: unknown }[];
}

/** Upstream's getPullSecretsForPod: entries without a name are skipped (the API once allowed them). */
export async function fetchPullSecrets(pod: Pod, get: SecretGetter): Promise<PullSecrets> {
  const namespace = pod.metadata?.namespace ?? 'default';
  const names = (pod.spec?.imagePullSecrets ?? []).map((r) => r.name ?? '').filter((n) => n !== '');
  const results = await Promise.all(
    names.map((name) =>
      get(namespace, name).then(
        (secret) => ({ name, secret }),
        (err: unknown) => ({ name, err }),
      ),
    ),
  );
  const out: PullSecrets = { secrets: [], failed: [] };
  for (const r of results) {
    if ('secret' in r) out.secrets.push(r.secret);
    else out.failed.push(r);
  }
  return out;
}
