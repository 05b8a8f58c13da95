// The local health endpoint upstream serves on 127.0.0.1:10248 (healthzPort), which
// supervisors probe. /metrics is served here too until the :10250 API exists.
import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';

export function healthzServer(address: string, port: number, healthy: () => string | undefined, registry: Registry): Promise<Server> {
  const server = createServer(async (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/healthz' || path === '/healthz/ping') {
      const problem = path === '/healthz' ? healthy() : undefined;
      res.writeHead(problem ? 500 : 200, { 'Content-Type': 'text/plain; charset=utf-8' }).end(problem ?? 'ok');
    } else if (path === '/metrics') {
      res.writeHead(200, { 'Content-Type': registry.contentType }).end(await registry.metrics());
    } else {
      res.writeHead(404).end('404 page not found\n');
    }
  });
  return new Promise((resolve, reject) => {
    server.once('error', (e) => reject(new Error(`cannot listen on ${address}:${port} for healthz: ${e.message}`)));
    server.listen(port, address, () => resolve(server));
  });
}
