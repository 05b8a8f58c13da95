// `kubelet-ts join`: what `kubeadm join` does for a worker, then the kubelet starts.
// Discovers and verifies the cluster with the bootstrap token and CA pin, writes the
// bootstrap kubeconfig and the cluster's KubeletConfiguration (kube-system/kubelet-config).
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import { stringify } from 'yaml';
import { apiClient } from '../apiserver/client.ts';
import type { Logger } from '../log/log.ts';
import { DiscoveryError, parseToken, verifyClusterInfo } from './discovery.ts';
import { apiPath } from '../apiserver/paths.ts';

export interface JoinOptions {
  endpoint: string;
  token: string;
  caHashes: string[];
  bootstrapKubeconfig: string;
  config: string;
  log: Logger;
}

function write(path: string, text: string) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text, { mode: 0o600 });
}

export async function join(o: JoinOptions): Promise<void> {
  const token = parseToken(o.token);
  const endpoint = /^https?:\/\//.test(o.endpoint) ? o.endpoint : `https://${o.endpoint}`;
  const path = apiPath({ resource: 'configmaps', namespace: 'kube-public', name: 'cluster-info' });
  // Unverified on purpose: the signature and the CA pin are what establish trust.
  const insecure = apiClient({ server: endpoint, insecureSkipTLSVerify: true });
  const cm = await insecure.get<ConfigMap>(path).catch((e) => {
    throw new DiscoveryError(`cannot read cluster-info from ${endpoint}: ${(e as Error).message}`);
  });
  const info = verifyClusterInfo(cm.data, token, o.caHashes);
  o.log.info('Cluster info signature and CA pin verified', { server: info.server });

  const ca = Buffer.from(info.caPem);
  const boot = apiClient({ server: info.server, ca, token: o.token });
  const kubeletConfig = await boot
    .get<ConfigMap>(apiPath({ resource: 'configmaps', namespace: 'kube-system', name: 'kubelet-config' }))
    .catch((e) => {
      throw new DiscoveryError(`cannot read kube-system/kubelet-config with the bootstrap token: ${(e as Error).message}`);
    });
  if (!kubeletConfig.data?.kubelet) throw new DiscoveryError('kube-system/kubelet-config has no "kubelet" key');

  write(
    o.bootstrapKubeconfig,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'kubernetes', cluster: { server: info.server, 'certificate-authority-data': ca.toString('base64') } }],
      contexts: [{ name: 'tls-bootstrap-token-user@kubernetes', context: { cluster: 'kubernetes', user: 'tls-bootstrap-token-user' } }],
      'current-context': 'tls-bootstrap-token-user@kubernetes',
      users: [{ name: 'tls-bootstrap-token-user', user: { token: o.token } }],
    }),
  );
  write(o.config, kubeletConfig.data.kubelet);
  o.log.info('Wrote the bootstrap kubeconfig and the kubelet configuration', {
    bootstrapKubeconfig: o.bootstrapKubeconfig,
    config: o.config,
  });
}
