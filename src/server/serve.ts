// Serves the kubelet API (src/server) on :10250 over HTTPS with the node's serving
// certificate, authenticating and authorizing as configured, and, when readOnlyPort is set,
// its default handlers on the read-only port over plain HTTP.
import type { Tracer } from '../tracing/tracer.ts';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, Server as HttpServer } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { ApiClient } from '../apiserver/client.ts';
import { servingCertificate, servingKeyPair } from '../certificates/serving-cert.ts';
import { dynamicFiles } from '../certificates/dynamic-files.ts';
import { parseCertBundle } from './x509-authn.ts';
import { certificateManager } from '../certificates/certificate-manager.ts';
import { SERVING_SIGNER } from '../certificates/csr.ts';
import { loadCurrent } from '../certificates/store.ts';

const SERVING_PREFIX = 'kubelet-server';
import type { KubeletConfig } from '../config/kubelet-config.ts';
import { serverCurves, serverTLS } from '../config/tls-options.ts';
import { logger, type Logger } from '../log/log.ts';
import { containerLogFile } from '../container-logs/locate.ts';
import { metrics, registerCertificateMetrics, registry } from '../metrics/metrics.ts';
import { requestLabels, type RequestLabels } from './request-metrics.ts';
import { probeRegistry } from '../metrics/probes.ts';
import type { PodRuntimeStatus } from '../container/types.ts';
import { kubeletAuthenticator } from './authn.ts';
import { webhookAuthorizer } from './authz.ts';
import { kubeletServer, readOnlyKubeletServer, type DefaultHandlerDeps } from './server.ts';
import { readOnlyEndpoint } from './read-only.ts';
import { HTTP_SETTINGS } from './http-settings.ts';
import type { SampleCache } from '../stats/cache.ts';
import { statsEndpoints } from '../stats/endpoints.ts';
import type { RuntimeStatsSource } from '../stats/runtime-source.ts';
import { configzDocument } from './configz.ts';
import { statuszFacts } from './zpages/statusz.ts';
import { runningPods } from './running-pods.ts';
import { journalctl } from './node-logs.ts';
import { accessCheck } from './auth-filter.ts';
import type { Authorizer } from './authz.ts';
import { StreamError, streamingUpgrade, type StreamRequest } from './streaming.ts';
import type { RuntimeClient } from '../cri/runtime-client.ts';
import { latest } from '../container/types.ts';
import { apiEndpoint } from './api-endpoint.ts';
import { featureEnabled } from '../features/gates.ts';

// node:http by getBuiltinModule, not import: its ESM facade reads every export, and the lazy
// WebSocket one loads undici, which only staticPodURL's fetch needs (docs/benchmarks.md).
const { createServer: createHttpServer } = process.getBuiltinModule('node:http');

interface Deps {
  config: KubeletConfig;
  certDir: string;
  nodeName: string;
  nodeIPs: string[];
  api: ApiClient;
  pods: () => Pod[];
  /**
   * A pod's containers, for exec, attach, port-forward and logs to find theirs: the PLEG's last view
   * of it unless the kubelet changed it since (RuntimeView.current). Upstream's findContainer lists
   * the runtime at every request; an instance's ID changes only by the kubelet's own doing.
   */
  runtime: (uid: string) => Promise<PodRuntimeStatus>;
  healthy: () => string | undefined;
  cri: RuntimeClient;
  /** The stats sample cache the composition root shares with the eviction manager. */
  stats: SampleCache;
  runtimeStats: RuntimeStatsSource;
  /** The kubelet's version, "v1.36.3": /statusz's binary and emulation versions. */
  kubeletVersion: string;
  /** /flagz's flags (src/cli/flagz.ts); undefined: no /flagz. */
  flagz?: Record<string, string>;
  /** KubeletConfiguration `tracing`: a server span a request. */
  tracer?: Tracer;
}

/** kubelet_http_*: counts the request and holds it in flight until the returned function is called. */
function observeRequest(labels: RequestLabels): () => void {
  metrics.httpRequests.inc(labels);
  metrics.httpInflightRequests.inc(labels);
  const end = metrics.httpRequestsDuration.startTimer(labels);
  return () => {
    end();
    metrics.httpInflightRequests.dec(labels);
  };
}

/** What the default handlers of either port read (upstream: the Server's host and resource analyzer). */
function defaultHandlerDeps(o: Pick<Deps, 'nodeName' | 'pods' | 'healthy' | 'stats' | 'tracer'>, log: Logger): DefaultHandlerDeps {
  // Upstream's SetMetricsProvider as it installs /metrics/cadvisor: the container stats come from
  // the kubelet's own cgroup reading, cAdvisor's way (PodAndContainerStatsFromCRI is refused).
  metrics.metricsProvider.set({ provider: 'cadvisor' }, 1);
  return {
    ...(o.tracer ? { tracer: o.tracer } : {}),
    log,
    metrics: registry,
    probeMetrics: probeRegistry,
    healthy: o.healthy,
    pods: o.pods,
    stats: statsEndpoints(o.stats, o.nodeName),
    observeRequest,
  };
}

/** The runtime's streaming URL for an exec, attach or port-forward into one of our pods. */
async function streamURL(o: Deps, r: StreamRequest): Promise<string> {
  const pod = o.pods().find((p) => p.metadata?.namespace === r.namespace && p.metadata?.name === r.pod);
  // Upstream's getExec, getAttach and getPortForward, and their words: an unknown pod is 404; a
  // pod without the running container or sandbox is kubelet.GetExec's (GetAttach's,
  // GetPortForward's) error, which streaming.WriteError answers with 500.
  if (!pod) throw new StreamError(404, 'pod does not exist');
  if (r.uid && pod.metadata?.uid !== r.uid) throw new StreamError(404, 'pod not found');
  const rt = await o.runtime(pod.metadata!.uid!);
  const fullName = `${r.pod}_${r.namespace}`;
  if (r.kind === 'portForward') {
    const sandbox = rt.sandboxes.find((s) => s.ready);
    if (!sandbox) throw new StreamError(500, `pod not found (${JSON.stringify(fullName)})`);
    return (await o.cri.portForward({ podSandboxId: sandbox.id, port: r.ports })).url;
  }
  const ctr = latest(rt, r.container);
  if (ctr?.phase !== 'running')
    throw new StreamError(
      500,
      r.kind === 'exec' ? `container not found (${JSON.stringify(r.container)})` : `container ${r.container} not found in pod ${fullName}`,
    );
  const streams = { stdin: r.stdin, stdout: r.stdout, stderr: r.stderr, tty: r.tty };
  return r.kind === 'exec'
    ? (await o.cri.exec({ containerId: ctr.id, cmd: r.command, ...streams })).url
    : (await o.cri.attach({ containerId: ctr.id, ...streams })).url;
}

export async function kubeletApiServer(o: Deps): Promise<Server> {
  const log = logger('server');
  const { authentication: authn, authorization: authz } = o.config;
  // serverTLSBootstrap: the certificate comes from a kubelet-serving CSR, which an operator (or
  // an approver) must approve; until then TLS handshakes fail, as upstream.
  const bootstrapTLS = o.config.serverTLSBootstrap && !o.config.tlsCertFile;
  const current = bootstrapTLS ? loadCurrent(o.certDir, SERVING_PREFIX)?.pem : undefined;
  const tls: { cert?: string; key?: string } = bootstrapTLS
    ? current
      ? { cert: current, key: current }
      : {}
    : servingCertificate({
        certDir: o.certDir,
        nodeName: o.nodeName,
        addresses: o.nodeIPs,
        certFile: o.config.tlsCertFile,
        keyFile: o.config.tlsPrivateKeyFile,
      });
  let clientCA: string | undefined;
  if (authn.x509ClientCAFile) {
    try {
      clientCA = readFileSync(authn.x509ClientCAFile, 'utf8');
    } catch (e) {
      throw new Error(`cannot read authentication.x509.clientCAFile ${authn.x509ClientCAFile}: ${(e as Error).message}`);
    }
  }
  // Upstream's BuildAuth: the client CA file is dynamic content, reloaded when it changes.
  const clientCAFile = authn.x509ClientCAFile
    ? dynamicFiles({
        name: 'client-ca-bundle',
        files: [authn.x509ClientCAFile],
        parse: ([pem]) => {
          if (parseCertBundle(pem!).length === 0) throw new Error(`no certificate in ${authn.x509ClientCAFile}`);
          return pem!;
        },
        onChange: (pem) => (clientCA = pem),
        log,
      })
    : undefined;
  const authenticate = kubeletAuthenticator({
    clientCA: () => clientCA,
    api: authn.webhookEnabled ? o.api : undefined,
    cacheTTLMs: authn.webhookCacheTTLMs,
    anonymous: authn.anonymousEnabled,
    uidFromCertificate: featureEnabled(o.config.featureGates, 'AllowParsingUserUIDFromCertAuth'),
    log,
  });
  const authorize: Authorizer =
    authz.mode === 'AlwaysAllow'
      ? async () => ({ allowed: true })
      : webhookAuthorizer(o.api, { allowTTLMs: authz.cacheAuthorizedTTLMs, denyTTLMs: authz.cacheUnauthorizedTTLMs });
  const { runtimeStats } = o;
  const app = kubeletServer({
    ...defaultHandlerDeps(o, log),
    nodeName: o.nodeName,
    runningPods: async () => runningPods(...(await Promise.all([runtimeStats.sandboxes(), runtimeStats.containers()]))),
    configz: () => configzDocument(o.config),
    systemLogsDir: '/var/log',
    enableSystemLogHandler: o.config.enableSystemLogHandler,
    enableProfilingHandler: o.config.enableProfilingHandler,
    enableDebugFlagsHandler: o.config.enableDebugFlagsHandler,
    debuggingHandlers: o.config.enableDebuggingHandlers,
    // InstallZPages: both gates beta and on by default in 1.36.
    statusz: featureEnabled(o.config.featureGates, 'ComponentStatusz') ? statuszFacts(o.kubeletVersion) : undefined,
    flagz: featureEnabled(o.config.featureGates, 'ComponentFlagz') ? o.flagz : undefined,
    // Upstream's Kubelet.Run: the query mode needs the NodeLogQuery gate (GA, locked on in 1.36) and the field.
    systemLogQuery: o.config.enableSystemLogQuery && featureEnabled(o.config.featureGates, 'NodeLogQuery') ? journalctl() : undefined,
    async containerLog(ns, name, container, previous) {
      const pod = o.pods().find((p) => p.metadata?.namespace === ns && p.metadata?.name === name);
      if (!pod) return undefined;
      // Fresh from the runtime, not the last relist: a container that just restarted has its previous log.
      const file = containerLogFile(pod, await o.runtime(pod.metadata!.uid!), container, previous, o.config.podLogsDir);
      return (
        file && {
          path: file.path,
          running: async () => (await o.runtime(pod.metadata!.uid!)).containers.find((c) => c.id === file.containerID)?.phase === 'running',
        }
      );
    },
    authenticate,
    authorize,
  });
  // tlsMinVersion and tlsCipherSuites (validated with the configuration), as upstream's server.go reports them.
  const { insecure, ...tlsVersionAndCiphers } = serverTLS(o.config.tlsMinVersion, o.config.tlsCipherSuites);
  // tlsCurvePreferences (upstream's TLSConfig.CurvePreferences): the key exchange groups, with the version and ciphers.
  const ecdhCurve = serverCurves(o.config.tlsCurvePreferences);
  const versionAndCiphers = { ...tlsVersionAndCiphers, ...(ecdhCurve ? { ecdhCurve } : {}) };
  for (const cipher of insecure) log.info('Use of insecure cipher detected.', { cipher });
  if (o.config.tlsMinVersion === 'VersionTLS13' && o.config.tlsCipherSuites.length)
    log.info('Warning: TLS 1.3 cipher suites are not configurable, ignoring --tls-cipher-suites');
  const server = createServer(
    { ...HTTP_SETTINGS, cert: tls.cert, key: tls.key, requestCert: true, rejectUnauthorized: false, ...versionAndCiphers },
    app,
  );
  const servingRotation = bootstrapTLS
    ? certificateManager(
        o.api,
        o.certDir,
        {
          prefix: SERVING_PREFIX,
          signer: SERVING_SIGNER,
          sans: [o.nodeName, ...o.nodeIPs],
          subject: { commonName: `system:node:${o.nodeName}`, organizations: ['system:nodes'] },
        },
        // A new secure context: the version and ciphers go with the certificate.
        {
          log,
          onCertificate: (pem) => server.setSecureContext({ cert: pem, key: pem, ...versionAndCiphers }),
          observe: registerCertificateMetrics('server'),
        },
      )
    : undefined;
  // tlsCertFile and tlsPrivateKeyFile reloaded when they change (ReloadKubeletServerCertificateFile,
  // upstream's NewKubeletServerCertificateDynamicFileManager).
  const servingFiles =
    !bootstrapTLS &&
    o.config.tlsCertFile &&
    o.config.tlsPrivateKeyFile &&
    featureEnabled(o.config.featureGates, 'ReloadKubeletServerCertificateFile')
      ? dynamicFiles({
          name: 'kubelet-server-cert-files',
          files: [o.config.tlsCertFile, o.config.tlsPrivateKeyFile],
          parse: servingKeyPair,
          onChange: (pair) => server.setSecureContext({ ...pair, ...versionAndCiphers }),
          log,
        })
      : undefined;
  server.on('close', () => {
    servingRotation?.stop();
    servingFiles?.stop();
    clientCAFile?.stop();
  });
  // exec, attach and port-forward: in flight while their stream is open. Without the debugging
  // handlers no upgrade is taken up: the request is a plain one, and gets their 405.
  if (o.config.enableDebuggingHandlers) {
    // ExtendWebSocketsToKubelet: WebSocket exec, attach and port-forward translated here to the
    // runtime's SPDY (upstream's getExec, getAttach and getPortForward), and declared on the Node.
    const webSockets = featureEnabled(o.config.featureGates, 'ExtendWebSocketsToKubelet')
      ? { count: (subresource: string) => metrics.websocketStreamingRequests.inc({ subresource }) }
      : undefined;
    const upgrade = streamingUpgrade(
      accessCheck(o.nodeName, authenticate, authorize, log),
      (r) => streamURL(o, r),
      log,
      o.tracer,
      webSockets,
    );
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      socket.once('close', observeRequest(requestLabels(req.method ?? '', req.url ?? '/')));
      void upgrade(req, socket, head);
    });
  }
  // enableServer: false: built (its serving certificate still kept) but not listening; close() still stops it.
  const at = apiEndpoint(o.config);
  if (!at) {
    log.info('Kubelet API not served (enableServer: false)', { port: o.config.port });
    return server;
  }
  return new Promise((resolve, reject) => {
    server.once('error', (e) => {
      reject(new Error(`cannot listen on ${at.address}:${at.port} for the kubelet API: ${e.message}`));
    });
    server.listen(at.port, at.address, () => {
      log.info('Kubelet API serving', at);
      resolve(server);
    });
  });
}

/**
 * Upstream's ListenAndServeKubeletReadOnlyServer: the default handlers over plain HTTP on
 * address:readOnlyPort, to anyone; undefined (nothing listens) when readOnlyPort is 0.
 * Streaming upgrades are not handled: node answers them as plain requests, which get 405.
 */
export async function kubeletReadOnlyServer(
  o: Pick<Deps, 'config' | 'nodeName' | 'pods' | 'healthy' | 'stats' | 'tracer'>,
): Promise<HttpServer | undefined> {
  const at = readOnlyEndpoint(o.config);
  if (!at) return undefined;
  const log = logger('server');
  log.info('Starting to listen read-only', at);
  const server = createHttpServer(HTTP_SETTINGS, readOnlyKubeletServer(defaultHandlerDeps(o, log)));
  return new Promise((resolve, reject) => {
    server.once('error', (e) => {
      reject(new Error(`cannot listen on ${at.address}:${at.port} for the read-only kubelet API: ${e.message}`));
    });
    server.listen(at.port, at.address, () => resolve(server));
  });
}
