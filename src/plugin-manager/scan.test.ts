import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scanSockets } from './scan.ts';

const listen = (path: string) =>
  new Promise<Server>((resolve) => {
    const s = createServer().listen(path, () => resolve(s));
  });

test('sockets found: recursive, no dot names, sockets only, a new file a new identity', async () => {
  const root = mkdtempSync(join(tmpdir(), 'plugins-registry-'));
  const servers: Server[] = [];
  try {
    mkdirSync(join(root, 'sub'));
    mkdirSync(join(root, '.hidden'));
    for (const p of ['a.sock', 'sub/b.sock', '.c.sock', '.hidden/d.sock']) servers.push(await listen(join(root, p)));
    writeFileSync(join(root, 'not-a-socket'), '');
    symlinkSync(join(root, 'sub'), join(root, 'link-to-dir'));
    const first = scanSockets(root);
    assert.deepEqual([...first.sockets.keys()], [join(root, 'a.sock'), join(root, 'sub/b.sock')]);
    assert.deepEqual(first.dirs, [root, join(root, 'sub')]);

    await new Promise((r) => servers[0]!.close(r));
    servers[0] = await listen(join(root, 'a.sock'));
    const again = scanSockets(root);
    assert.notEqual(again.sockets.get(join(root, 'a.sock')), first.sockets.get(join(root, 'a.sock')));
    assert.equal(again.sockets.get(join(root, 'sub/b.sock')), first.sockets.get(join(root, 'sub/b.sock')));

    assert.throws(() => scanSockets(join(root, 'missing')), /ENOENT/);
  } finally {
    for (const s of servers) s.close();
    rmSync(root, { recursive: true, force: true });
  }
});
