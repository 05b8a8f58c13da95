// Reads a kubeconfig into what the REST client needs: the fields a kubelet's kubeconfig uses
// (kubeadm's kubelet.conf, bootstrap-kubelet.conf: certs, CA, tokens; a cloud's: an exec
// credential plugin). The others client-go would act on (UNSUPPORTED) stop the start with one
// line naming them, rather than being left out and the apiserver answering 401 to a kubelet
// without its credentials.
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parse } from 'yaml';
import { type ExecConfig, ExecConfigError, parseExecConfig } from './exec-credential.ts';

export interface Connection {
  server: string;
  ca?: Buffer;
  /** Where ca was read from: the kubeconfig's certificate-authority file (not -data), read again as client-go's CA rotation does (src/apiserver/ca-reload.ts). */
  caFile?: string;
  cert?: Buffer;
  key?: Buffer;
  token?: string;
  insecureSkipTLSVerify?: boolean;
  tlsServerName?: string;
  /** The user's exec credential plugin: its token or certificate and key come from it (src/apiserver/exec-credential.ts). */
  exec?: ExecConfig;
}

interface Named<T> {
  name: string;
  [k: string]: unknown;
  cluster?: T;
  user?: T;
  context?: T;
}
type Obj = Record<string, unknown>;

export class KubeconfigError extends Error {}

/** What client-go's clientcmd reads into a rest.Config and kubelet-ts does not do, by section. */
const UNSUPPORTED = {
  cluster: ['proxy-url'],
  user: ['auth-provider', 'username', 'password', 'as', 'as-uid', 'as-groups', 'as-user-extra'],
} as const;

export function loadKubeconfig(path: string): Connection {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new KubeconfigError(`cannot read kubeconfig ${path}: ${(e as Error).message}`);
  }
  let doc: Obj;
  try {
    doc = parse(text) as Obj;
  } catch (e) {
    throw new KubeconfigError(`invalid kubeconfig ${path}: ${(e as Error).message}`);
  }
  return connectionFrom(doc, dirname(resolve(path)), path);
}

/** Pure: resolves the current context of a parsed kubeconfig; relative file paths are relative to baseDir. */
export function connectionFrom(doc: Obj, baseDir: string, label = 'kubeconfig', read: (path: string) => Buffer = readFileSync): Connection {
  if (!doc || typeof doc !== 'object') throw new KubeconfigError(`invalid kubeconfig ${label}: not a mapping`);
  const pick = <T>(list: unknown, name: string | undefined, key: 'cluster' | 'user' | 'context'): T => {
    const items = (Array.isArray(list) ? list : []) as Named<T>[];
    const found = name === undefined ? (items.length === 1 ? items[0] : undefined) : items.find((i) => i.name === name);
    if (!found?.[key]) throw new KubeconfigError(`invalid kubeconfig ${label}: no ${key} ${name ?? '(current-context is not set)'}`);
    return found[key] as T;
  };
  const current = doc['current-context'] as string | undefined;
  const ctx = pick<Obj>(doc.contexts, current, 'context');
  const cluster = pick<Obj>(doc.clusters, ctx.cluster as string, 'cluster');
  const user = ctx.user === undefined ? {} : pick<Obj>(doc.users, ctx.user as string, 'user');
  const file = (f: unknown) => {
    const p = resolve(baseDir, String(f));
    try {
      return read(p);
    } catch (e) {
      throw new KubeconfigError(`kubeconfig ${label} names ${p}, which cannot be read: ${(e as Error).message}`);
    }
  };
  const bytes = (dataKey: string, fileKey: string, from: Obj): Buffer | undefined =>
    from[dataKey] ? Buffer.from(String(from[dataKey]), 'base64') : from[fileKey] ? file(from[fileKey]) : undefined;
  if (typeof cluster.server !== 'string' || !/^https?:\/\//.test(cluster.server)) {
    throw new KubeconfigError(`invalid kubeconfig ${label}: cluster server ${JSON.stringify(cluster.server)} is not an http(s) URL`);
  }
  const unsupported = (['cluster', 'user'] as const).flatMap((section) =>
    UNSUPPORTED[section]
      .filter((k) => {
        const v = (section === 'cluster' ? cluster : user)[k];
        return v !== undefined && v !== null && v !== '' && !(Array.isArray(v) && !v.length);
      })
      .map((k) => `${section === 'cluster' ? `cluster ${ctx.cluster}` : `user ${ctx.user}`}: ${k}`),
  );
  if (unsupported.length) throw new KubeconfigError(`kubeconfig ${label}: not supported by kubelet-ts: ${unsupported.join(', ')}`);
  const token = user.token ? String(user.token) : user.tokenFile ? file(user.tokenFile).toString('utf8').trim() : undefined;
  let exec: ExecConfig | undefined;
  if (user.exec) {
    try {
      exec = parseExecConfig(user.exec, String(ctx.user), () =>
        execClusterInfo(cluster, bytes('certificate-authority-data', 'certificate-authority', cluster)),
      );
    } catch (e) {
      if (e instanceof ExecConfigError) throw new KubeconfigError(`invalid kubeconfig ${label}: ${e.message}`);
      throw e;
    }
  }
  return {
    server: cluster.server.replace(/\/+$/, ''),
    ca: bytes('certificate-authority-data', 'certificate-authority', cluster),
    ...(!cluster['certificate-authority-data'] && cluster['certificate-authority']
      ? { caFile: resolve(baseDir, String(cluster['certificate-authority'])) }
      : {}),
    cert: bytes('client-certificate-data', 'client-certificate', user),
    key: bytes('client-key-data', 'client-key', user),
    token,
    insecureSkipTLSVerify: cluster['insecure-skip-tls-verify'] === true,
    tlsServerName: cluster['tls-server-name'] as string | undefined,
    ...(exec ? { exec } : {}),
  };
}

/** Pure: ExecCredential's spec.cluster for provideClusterInfo (client-go's v1 Cluster), the plugin's config from the cluster's extension. */
function execClusterInfo(cluster: Obj, ca: Buffer | undefined): Record<string, unknown> {
  const extensions = (Array.isArray(cluster.extensions) ? cluster.extensions : []) as { name?: string; extension?: unknown }[];
  const config = extensions.find((x) => x.name === 'client.authentication.k8s.io/exec')?.extension;
  return {
    server: cluster.server,
    ...(cluster['tls-server-name'] ? { 'tls-server-name': cluster['tls-server-name'] } : {}),
    ...(cluster['insecure-skip-tls-verify'] === true ? { 'insecure-skip-tls-verify': true } : {}),
    ...(ca ? { 'certificate-authority-data': ca.toString('base64') } : {}),
    ...(config !== undefined ? { config } : {}),
  };
}
