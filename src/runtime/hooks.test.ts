import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { createServer as createTLS } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { newPrivateKey, selfSignedServingCert } from '../certificates/pki.ts';
import { runHook } from './hooks.ts';

const pod: Pod = { metadata: { namespace: 'ns', name: 'p', uid: 'u' } };
const target = { pod, container: { name: 'app' }, containerId: 'c', podIP: '127.0.0.1' };
const events: string[] = [];
let fallbacks = 0;
const deps = {
  cri: { execSync: () => Promise.reject(new Error('no exec here')) },
  events: {
    event: (o: { name?: string; fieldPath?: string }, type: string, reason: string, message: string) =>
      events.push(`${o.name}${o.fieldPath ? `/${o.fieldPath}` : ''} ${type} ${reason}: ${message}`),
  },
  observe: { httpFallback: () => fallbacks++ },
};
const listen = async <S extends { listen: (p: number, h: string, cb: () => void) => unknown; address: () => unknown }>(s: S) => {
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return (s.address() as AddressInfo).port;
};

test('httpGet hooks as upstream runHTTPHandler: TLS unverified, any status succeeds, HTTPS answered in HTTP retried over HTTP', async () => {
  const seen: string[] = [];
  const plain = createServer((req, res) => {
    seen.push(`${req.url} ${req.headers['user-agent']}`);
    res.writeHead(req.url === '/fail' ? 500 : 200).end();
  });
  const key = newPrivateKey();
  const tls = createTLS({ key, cert: await selfSignedServingCert(key, 'hook-test', ['127.0.0.1']) }, (req, res) => {
    seen.push(`tls ${req.url}`);
    res.end();
  });
  const [httpPort, tlsPort] = [await listen(plain), await listen(tls)];
  try {
    const hook = (port: number, path: string, scheme = 'HTTP') => runHook(deps, target, { httpGet: { port, path, scheme } }, 2);
    assert.equal(await hook(tlsPort, '/secure', 'HTTPS'), undefined);
    assert.equal(await hook(httpPort, '/fail'), undefined);
    assert.equal(await hook(httpPort, '/fallback', 'HTTPS'), undefined);
    assert.deepEqual(seen, ['tls /secure', '/fail kube-lifecycle/1.36', '/fallback kube-lifecycle/1.36']);
    // Only the fallback is reported: a warning on the pod (not its container) and the counter.
    assert.deepEqual(events, [
      `p Warning LifecycleHTTPFallback: request to HTTPS lifecycle hook 127.0.0.1:${httpPort} got HTTP response, retry with HTTP succeeded`,
    ]);
    assert.equal(fallbacks, 1);
    plain.close();
    const err = await hook(httpPort, '/gone');
    assert.equal(
      err,
      `HTTP lifecycle hook (/gone) for Container "app" in Pod "p_ns(u)" failed - error: Get "http://127.0.0.1:${httpPort}/gone": dial tcp 127.0.0.1:${httpPort}: connect: connection refused`,
    );
  } finally {
    plain.closeAllConnections();
    plain.close();
    tls.closeAllConnections();
    tls.close();
  }
});

test("a sleep hook: the whole sleep, or cut short by the kill's signal with upstream's error, counted", async () => {
  let early = 0;
  const d = { ...deps, observe: { sleepTerminatedEarly: () => early++ } };
  assert.equal(await runHook(d, target, { sleep: { seconds: 0 } }), undefined);
  const stop = new AbortController();
  const hook = runHook(d, target, { sleep: { seconds: 30 } }, undefined, stop.signal);
  stop.abort();
  assert.equal(
    await hook,
    'Sleep lifecycle hook (30) for Container "app" in Pod "p_ns(u)" failed - error: container terminated before sleep hook finished',
  );
  assert.equal(early, 1);
});
