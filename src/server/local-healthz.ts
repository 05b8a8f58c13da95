// The local health endpoint upstream serves on 127.0.0.1:10248 (healthzPort), which
// supervisors probe without credentials.
import type { Server } from 'node:http';

// node:http by getBuiltinModule, not import: its ESM facade reads every export, and the lazy
// WebSocket one loads undici, which only staticPodURL's fetch needs (docs/benchmarks.md).
const { createServer } = process.getBuiltinModule('node:http');

export function healthzServer(address: string, port: number, healthy: () => string | undefined): Promise<Server> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/healthz' && path !== '/healthz/ping') return void res.writeHead(404).end('404 page not found\n');
    const problem = path === '/healthz' ? healthy() : undefined;
    res.writeHead(problem ? 500 : 200, { 'Content-Type': 'text/plain; charset=utf-8' }).end(problem ?? 'ok');
  });
  return new Promise((resolve, reject) => {
    server.once('error', (e) => reject(new Error(`cannot listen on ${address}:${port} for healthz: ${e.message}`)));
    server.listen(port, address, () => resolve(server));
  });
}
