// A fake apiserver on 127.0.0.1 for the client's unit tests: every request is read whole and
// handed to `handle`, which records and answers it. Not named .test.ts, so the unit test glob does
// not run it as a test file; tsconfig.build.json leaves it out of dist.
import { after } from 'node:test';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Request = { method: string; url: string; headers: IncomingHttpHeaders; body: Buffer };

/** Starts the server, closes it after the file's tests, and resolves to its base URL. */
export async function fakeApiserver(handle: (q: Request, res: ServerResponse) => void): Promise<string> {
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    handle({ method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks) }, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  after(() => {
    server.closeAllConnections();
    server.close();
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
