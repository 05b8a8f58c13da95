// The kubelet's API (upstream pkg/kubelet/server): on :10250 health, the pods it runs,
// stats, metrics, configuration, container and node logs, each request authenticated and
// authorized first; the caller serves that app over HTTPS with the node's serving
// certificate, requesting (not verifying) client certificates; authentication verifies them.
// The read-only port serves only the default handlers, to anyone, over plain HTTP.
import type { RequestListener } from 'node:http';
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { Registry } from 'prom-client';
import type { Logger } from '../log/log.ts';
import { accessCheck, authFilter } from './auth-filter.ts';
import type { Authenticator } from './authn.ts';
import type { Authorizer } from './authz.ts';
import type { StatsEndpoints } from '../stats/endpoints.ts';
import { containerLogsHandler, type ContainerLog } from './container-logs.ts';
import { healthzReport, kubeletChecks, singleCheck } from './healthz.ts';
import { onlyCpuAndMemory } from './summary-query.ts';
import { withGoBucketBounds } from '../metrics/go-float.ts';
import { systemLogsHandler } from './system-logs.ts';
import { type Journal, nodeLogQueryHandler } from './node-logs.ts';
import { requestLabels, type RequestLabels, type ServerType } from './request-metrics.ts';
import { type Handler, reply, replyJSON, type Response, Router } from './router.ts';
import { SpanKind } from '../tracing/span.ts';
import { NO_TRACER, type Tracer } from '../tracing/tracer.ts';
import { setVerbosity } from '../log/log.ts';
import { debugFlagsHandler } from './debug-flags.ts';
import { pprofHandler } from './pprof/handlers.ts';
import { inspectorProfiler, type Profiler } from './pprof/profiler.ts';
import { flagzHandler, statuszHandler } from './zpages/handlers.ts';
import { registeredHandlePaths, type StatuszFacts } from './zpages/statusz.ts';

// node:http by getBuiltinModule, not import: its ESM facade reads every export, and the lazy
// WebSocket one loads undici (src/apiserver/client.ts says more).
const { STATUS_CODES } = process.getBuiltinModule('node:http');

/** What the default handlers read: all the read-only port needs. */
export interface DefaultHandlerDeps {
  /** The pods the kubelet runs. */
  pods(): Pod[];
  metrics: Registry;
  /** /metrics/probes: the prober's registry. */
  probeMetrics: Registry;
  /** /stats/summary, /metrics/cadvisor and /metrics/resource, from the stats cache. */
  stats: StatsEndpoints;
  /** Why the sync loop is unhealthy, or undefined. */
  healthy(): string | undefined;
  log: Logger;
  /** A request began (labels as upstream's kubelet_http_* metrics); call the result when it ends. */
  observeRequest?: (labels: RequestLabels) => () => void;
  /** KubeletConfiguration `tracing`: otelrestful's server span a request (InstallTracingFilter). */
  tracer?: Tracer;
}

export interface ServerDeps extends DefaultHandlerDeps {
  nodeName: string;
  /** The current instance's log, or with `previous` the last terminated one's; undefined: 404. */
  containerLog(namespace: string, pod: string, container: string, previous: boolean): Promise<ContainerLog | undefined>;
  /** /runningpods/: the pods the runtime runs, as minimal Pods. */
  runningPods(): Promise<Pod[]>;
  /** /configz: the effective configuration document. */
  configz(): unknown;
  /** /logs/: the node's log directory (upstream: /var/log). */
  systemLogsDir: string;
  /** enableSystemLogHandler (default true): false answers /logs/ with 405. */
  enableSystemLogHandler?: boolean;
  /** enableProfilingHandler and enableDebugFlagsHandler (default true): false answers /debug/pprof/ and /debug/flags/v with 405. */
  enableProfilingHandler?: boolean;
  enableDebugFlagsHandler?: boolean;
  /** /debug/pprof/'s profilers (default: the process's, through node:inspector). */
  profiler?: Profiler;
  /** What PUT /debug/flags/v calls (default: the log's setVerbosity). */
  setVerbosity?: (v: number) => void;
  /**
   * enableDebuggingHandlers (default true): false answers exec, attach, port-forward, run,
   * containerLogs, runningpods, pprof and logs with 405, and serves no /configz (upstream's NewServer).
   */
  debuggingHandlers?: boolean;
  /** /statusz (the ComponentStatusz gate): the facts it shows but the paths, which the server knows; undefined: not served. */
  statusz?: Omit<StatuszFacts, 'listedPaths'>;
  /** /flagz (the ComponentFlagz gate): every flag with its value; undefined: not served. */
  flagz?: Record<string, string>;
  /** enableSystemLogQuery with NodeLogQuery: /logs/ takes queries (node-logs.ts), read from this journal. */
  systemLogQuery?: Journal;
  authenticate: Authenticator;
  authorize: Authorizer;
}

// Pod objects are replaced, never changed, on update: each is serialized once, and the whole
// body is kept while the set of pod objects stays the same, so /pods under many scrapers
// costs a comparison of references rather than a stringify (or a join) per request.
const serialized = new WeakMap<Pod, string>();
let last: { pods: Pod[]; body: Buffer } | undefined;
export function podList(pods: Pod[]): Buffer {
  if (last && last.pods.length === pods.length && last.pods.every((p, i) => p === pods[i])) return last.body;
  const items = pods.map((p) => {
    let s = serialized.get(p);
    if (s === undefined) serialized.set(p, (s = JSON.stringify(p)));
    return s;
  });
  last = { pods: [...pods], body: Buffer.from(`{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[${items.join(',')}]}`) };
  return last.body;
}

/** The app of :10250 (upstream NewServer with auth and enableDebuggingHandlers). */
export function kubeletServer(deps: ServerDeps): RequestListener {
  const app = newApp(deps, 'readwrite');
  const debugging = deps.debuggingHandlers !== false;
  // Upstream registers both disabled forms on the mux, outside the filters: no authentication, any method.
  if (!debugging) installDebuggingDisabledHandlers(app);
  // (InstallSystemLogHandler's, InstallProfilingHandler's and InstallDebugFlagsHandler's, only
  // with the debugging handlers: go-restful's Container.Handle, outside the filters too.)
  else {
    const disabled = (path: RegExp, what: string) =>
      app.all(path, (_req, res) => reply(res, 405, 'text/plain', `${what} endpoint is disabled.\n`));
    if (deps.enableSystemLogHandler === false) disabled(/^\/logs\/.*$/, 'logs');
    if (deps.enableProfilingHandler === false) disabled(/^\/debug\/pprof(\/.*)?$/, 'profiling');
    if (deps.enableDebugFlagsHandler === false) disabled(/^\/debug\/flags\/v$/, 'flags');
  }
  app.use(authFilter(accessCheck(deps.nodeName, deps.authenticate, deps.authorize, deps.log)));
  // InstallTracingFilter: a container filter after the auth filter, so a refused request has no span.
  if (traced(deps)) app.use(tracingFilter(deps.tracer, false));
  installAuthNotRequiredHandlers(app, deps);
  if (debugging) installAuthRequiredHandlers(app, deps);
  return finish(app, deps.log);
}

/**
 * The app of the read-only port (upstream ListenAndServeKubeletReadOnlyServer: NewServer with
 * neither auth nor a configuration): no authentication or authorization, the default handlers,
 * and the debugging paths answering 405.
 */
export function readOnlyKubeletServer(deps: DefaultHandlerDeps): RequestListener {
  const app = newApp(deps, 'readonly');
  if (traced(deps)) app.use(tracingFilter(deps.tracer, true));
  installAuthNotRequiredHandlers(app, deps);
  installDebuggingDisabledHandlers(app);
  return finish(app, deps.log);
}

function newApp(deps: DefaultHandlerDeps, serverType: ServerType): Router {
  const app = new Router();
  // Every request counts, those refused by authentication or authorization too (upstream's
  // ServeHTTP counts before its container filters).
  const observe = deps.observeRequest;
  if (observe)
    app.use((req, res, next) => {
      res.once('close', observe(requestLabels(req.method, req.url, serverType)));
      next();
    });
  return app;
}

/** Tracing configured: without it no filter is installed, so a request costs nothing more. */
const traced = (deps: DefaultHandlerDeps): deps is DefaultHandlerDeps & { tracer: Tracer } =>
  deps.tracer !== undefined && deps.tracer !== NO_TRACER;

const UNTRACED = /^\/(healthz|metrics|configz|flagz|statusz|debug\/flags)(\/|$)/;

/**
 * otelrestful's OTelFilter: a server span a request, current while it is served (the CRI calls
 * of an exec are its children), named for the route that answers it ({param} as go-restful
 * writes it). The main port continues the caller's trace (its traceparent); the read-only one
 * is a public endpoint (WithPublicEndpoint): always a new root.
 */
function tracingFilter(tracer: Tracer, publicEndpoint: boolean): Handler {
  return (req, res, next) => {
    // What upstream registers on the container's mux (Handle), past its filters: no span.
    if (UNTRACED.test(req.path)) return next();
    const socket = req.socket;
    const attrs = {
      'http.request.method': req.method,
      'url.scheme': 'encrypted' in socket ? 'https' : 'http',
      'url.path': req.path,
      'server.address': socket.localAddress ?? '',
      'server.port': socket.localPort ?? 0,
      'network.peer.address': socket.remoteAddress ?? '',
      'network.peer.port': socket.remotePort ?? 0,
      'user_agent.original': req.headers['user-agent'] ?? '',
      'network.protocol.version': req.httpVersion,
    };
    const header = req.headers.traceparent;
    const remoteParent = publicEndpoint || typeof header !== 'string' ? undefined : header;
    void tracer.inSpan(
      req.path,
      attrs,
      (span) =>
        new Promise<void>((done) => {
          res.once('close', () => {
            if (req.route) {
              const route = req.route.replace(/:(\w+)/g, '{$1}');
              span.setName(route);
              span.setAttributes({ 'http.route': route });
            }
            span.setAttributes({ 'http.response.status_code': res.statusCode });
            if (res.statusCode >= 500) span.fail('', false);
            done();
          });
          next();
        }),
      { kind: SpanKind.server, ...(remoteParent ? { remoteParent } : {}) },
    );
  };
}

const send = (res: Response, r: { status: number; body: string }) => reply(res, r.status, 'text/plain', r.body);

/** Upstream's InstallAuthNotRequiredHandlers: served on both ports. */
function installAuthNotRequiredHandlers(app: Router, deps: DefaultHandlerDeps): void {
  app.get('/healthz', (req, res) => send(res, healthzReport(kubeletChecks(deps.healthy), 'verbose' in req.query)));
  app.get('/healthz/:check', (req, res, next) => {
    const r = singleCheck(kubeletChecks(deps.healthy), req.params.check);
    if (r) send(res, r);
    else next();
  });
  app.get('/pods', (_req, res) => reply(res, 200, 'application/json', podList(deps.pods())));
  app.get('/metrics', async (_req, res) => reply(res, 200, deps.metrics.contentType, withGoBucketBounds(await deps.metrics.metrics())));
  const exposition =
    (render: () => Promise<string>): Handler =>
    async (_req, res) =>
      reply(res, 200, 'text/plain; version=0.0.4; charset=utf-8', await render());
  app.get(
    '/metrics/resource',
    exposition(() => deps.stats.resourceMetrics()),
  );
  app.get(
    '/metrics/cadvisor',
    exposition(() => deps.stats.cadvisorMetrics()),
  );
  app.get('/metrics/probes', async (_req, res) =>
    reply(res, 200, deps.probeMetrics.contentType, withGoBucketBounds(await deps.probeMetrics.metrics())),
  );
  const summary: Handler = async (req, res) => {
    const only = onlyCpuAndMemory(req.query);
    if (typeof only !== 'boolean') return reply(res, only.status, 'text/plain', only.message);
    let body: string;
    try {
      body = await deps.stats.summaryJSON(only);
    } catch (e) {
      deps.log.error('HTTP InternalServerError serving /stats/summary', { err: e });
      return reply(res, 500, 'text/plain', `Internal Error: ${(e as Error).message}\n`);
    }
    reply(res, 200, 'application/json', body);
  };
  // Upstream serves the summary to GET and POST alike.
  app.get('/stats/summary', summary);
  app.post('/stats/summary', summary);
}

/** Upstream's InstallAuthRequiredHandlers and InstallSystemLogHandler: only behind the auth filter. */
function installAuthRequiredHandlers(app: Router, deps: ServerDeps): void {
  app.get('/runningpods/', async (_req, res) =>
    replyJSON(res, { kind: 'PodList', apiVersion: 'v1', metadata: {}, items: await deps.runningPods() }),
  );
  app.get('/configz', (_req, res) => replyJSON(res, deps.configz()));
  if (deps.enableSystemLogHandler !== false)
    app.get(
      /^\/logs\/.*$/,
      deps.systemLogQuery
        ? nodeLogQueryHandler({ root: deps.systemLogsDir, journal: deps.systemLogQuery })
        : systemLogsHandler(deps.systemLogsDir),
    );
  app.get('/containerLogs/:podNamespace/:podID/:containerName', containerLogsHandler(deps, deps.log));
  if (deps.enableProfilingHandler !== false)
    app.get(/^\/debug\/pprof\/.*$/, pprofHandler({ profiler: deps.profiler ?? inspectorProfiler, log: deps.log, argv: process.argv }));
  if (deps.enableDebugFlagsHandler !== false) app.all(/^\/debug\/flags\/v$/, debugFlagsHandler(deps.setVerbosity ?? setVerbosity));
  installZPages(app, deps);
}

/**
 * Upstream's InstallZPages, last of the debugging handlers: /flagz, then /statusz listing what
 * was registered before it. Exact paths, any method (Container.Handle), behind the auth filter.
 */
function installZPages(app: Router, deps: ServerDeps): void {
  if (deps.flagz) app.all(/^\/flagz$/, flagzHandler(deps.flagz));
  if (deps.statusz) {
    const listedPaths = registeredHandlePaths({
      enableSystemLogHandler: deps.enableSystemLogHandler !== false,
      enableProfilingHandler: deps.enableProfilingHandler !== false,
      flagz: deps.flagz !== undefined,
    });
    app.all(/^\/statusz$/, statuszHandler({ ...deps.statusz, listedPaths }));
  }
}

/**
 * Upstream's InstallDebuggingDisabledHandlers: the debugging subtrees answer any method with
 * 405 "Debug endpoints are disabled." (http.Error, hence the newline); /configz is not among
 * them and stays a 404.
 */
const DEBUGGING_PATHS = /^\/(run|exec|attach|portForward|containerLogs|runningpods|debug\/pprof|logs)\//;
function installDebuggingDisabledHandlers(app: Router): void {
  app.all(DEBUGGING_PATHS, (_req, res) => reply(res, 405, 'text/plain', 'Debug endpoints are disabled.\n'));
}

function finish(app: Router, log: Logger): RequestListener {
  app.use((_req, res) => reply(res, 404, 'text/plain', '404 page not found\n'));
  app.onError((err, req, res) => {
    // The client's fault (a path parameter that is not valid percent-encoding): Go's server
    // refuses such a request URI with 400 before any handler; nothing to log as ours.
    const status = (err as { status?: unknown }).status;
    if (typeof status === 'number' && status >= 400 && status < 500 && !res.headersSent)
      return reply(res, status, 'text/plain', `${status} ${STATUS_CODES[status] ?? 'Bad Request'}\n`);
    log.error('Kubelet API request failed', { path: req.path, err });
    if (res.headersSent) res.destroy();
    else reply(res, 500, 'text/plain', 'Internal Server Error\n');
  });
  return app.listener();
}
