// Serves the kubelet API (src/server) on :10250 over HTTPS with the node's serving
// certificate, authenticating and authorizing as configured.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { ApiClient } from '../apiserver/client.ts';
import { servingCertificate } from '../certificates/serving-cert.ts';
import type { KubeletConfig } from '../config/kubelet-config.ts';
import { logger } from '../log/log.ts';
import { containerLogFile } from '../logs/locate.ts';
import { registry } from '../metrics/metrics.ts';
import type { PodRuntimeStatus } from '../runtime/types.ts';
import { kubeletAuthenticator } from '../server/authn.ts';
import { webhookAuthorizer } from '../server/authz.ts';
import { kubeletServer } from '../server/server.ts';

export async function kubeletApiServer(o: {
  config: KubeletConfig; certDir: string; nodeName: string; nodeIP: string; api: ApiClient;
  pods: () => Pod[]; runtime: (uid: string) => Promise<PodRuntimeStatus>; healthy: () => string | undefined;
}): Promise<Server> {
  const log = logger('server');
  const { authentication: authn, authorization: authz } = o.config;
  const tls = await servingCertificate({ certDir: o.certDir, nodeName: o.nodeName, addresses: [o.nodeIP], certFile: o.config.tlsCertFile, keyFile: o.config.tlsPrivateKeyFile });
  let clientCA: string | undefined;
  if (authn.x509ClientCAFile) {
    try { clientCA = readFileSync(authn.x509ClientCAFile, 'utf8'); } catch (e) {
      throw new Error(`cannot read authentication.x509.clientCAFile ${authn.x509ClientCAFile}: ${(e as Error).message}`);
    }
  }
  const app = kubeletServer({
    nodeName: o.nodeName, log, metrics: registry, healthy: o.healthy, pods: o.pods,
    async containerLog(ns, name, container, previous) {
      const pod = o.pods().find((p) => p.metadata?.namespace === ns && p.metadata?.name === name);
      if (!pod) return undefined;
      // Fresh from the runtime, not the last relist: a container that just restarted has its previous log.
      const file = containerLogFile(pod, await o.runtime(pod.metadata!.uid!), container, previous, o.config.podLogsDir);
      return file && { path: file.path, running: async () => (await o.runtime(pod.metadata!.uid!)).containers.find((c) => c.id === file.containerID)?.phase === 'running' };
    },
    authenticate: kubeletAuthenticator({
      clientCA, api: authn.webhookEnabled ? o.api : undefined, cacheTTLMs: authn.webhookCacheTTLMs, anonymous: authn.anonymousEnabled, log,
    }),
    authorize: authz.mode === 'AlwaysAllow'
      ? async () => ({ allowed: true })
      : webhookAuthorizer(o.api, { allowTTLMs: authz.cacheAuthorizedTTLMs, denyTTLMs: authz.cacheUnauthorizedTTLMs }),
  });
  const server = createServer({ cert: tls.cert, key: tls.key, requestCert: true, rejectUnauthorized: false, minVersion: 'TLSv1.2' }, app);
  return new Promise((resolve, reject) => {
    server.once('error', (e) => reject(new Error(`cannot listen on ${o.config.address}:${o.config.port} for the kubelet API: ${e.message}`)));
    server.listen(o.config.port, o.config.address, () => { log.info('Kubelet API serving', { address: o.config.address, port: o.config.port }); resolve(server); });
  });
}
