// The kubelet's API on :10250 (upstream pkg/kubelet/server): health, the pods it runs,
// its metrics and container logs, each request authenticated and authorized first. The
// caller serves the app over HTTPS with the node's serving certificate, requesting (not
// verifying) client certificates; authentication verifies them.
import express, { type Express } from 'express';
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { Registry } from 'prom-client';
import type { Logger } from '../log/log.ts';
import { accessCheck, authFilter } from './auth-filter.ts';
import type { Authenticator } from './authn.ts';
import type { Authorizer } from './authz.ts';
import { containerLogsHandler, type ContainerLog } from './container-logs.ts';
import { healthzReport, kubeletChecks, singleCheck } from './healthz.ts';

export interface ServerDeps {
  nodeName: string;
  /** The pods the kubelet runs. */
  pods(): Pod[];
  /** The current instance's log, or with `previous` the last terminated one's; undefined: 404. */
  containerLog(namespace: string, pod: string, container: string, previous: boolean): Promise<ContainerLog | undefined>;
  metrics: Registry;
  /** The /metrics/resource exposition (node, pod and container CPU and memory). */
  resourceMetrics(): Promise<string>;
  /** Why the sync loop is unhealthy, or undefined. */
  healthy(): string | undefined;
  authenticate: Authenticator;
  authorize: Authorizer;
  log: Logger;
}

export function kubeletServer(deps: ServerDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  // Authorization maps paths case-sensitively, so routing must too.
  app.enable('case sensitive routing');
  app.use(authFilter(accessCheck(deps.nodeName, deps.authenticate, deps.authorize, deps.log)));

  const send = (res: express.Response, r: { status: number; body: string }) => void res.status(r.status).type('text/plain').send(r.body);
  app.get('/healthz', (req, res) => send(res, healthzReport(kubeletChecks(deps.healthy), 'verbose' in req.query)));
  app.get('/healthz/:check', (req, res, next) => {
    const r = singleCheck(kubeletChecks(deps.healthy), req.params.check);
    if (r) send(res, r); else next();
  });
  app.get('/pods', (_req, res) => void res.json({ kind: 'PodList', apiVersion: 'v1', metadata: {}, items: deps.pods() }));
  app.get('/metrics', async (_req, res) => void res.type(deps.metrics.contentType).send(await deps.metrics.metrics()));
  app.get('/metrics/resource', async (_req, res) => void res.type('text/plain; version=0.0.4; charset=utf-8').send(await deps.resourceMetrics()));
  app.get('/containerLogs/:namespace/:pod/:container', containerLogsHandler(deps, deps.log));

  app.use((_req, res) => void res.status(404).type('text/plain').send('404 page not found\n'));
  app.use(((err, req, res, _next) => {
    deps.log.error('Kubelet API request failed', { path: req.path, err });
    if (res.headersSent) res.destroy(); else res.status(500).type('text/plain').send('Internal Server Error\n');
  }) as express.ErrorRequestHandler);
  return app;
}
