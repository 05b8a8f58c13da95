import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import { ApiError } from '../apiserver/client.ts';
import { apiEnvSource, podServices } from './env-sources.ts';
import type { ServiceLister } from './service-cache.ts';

function fakeApi(objects: Record<string, unknown>) {
  const calls: string[] = [];
  return {
    calls,
    get: async <T>(p: string): Promise<T> => {
      calls.push(p);
      const o = objects[p];
      if (o instanceof Error) throw o;
      if (o === undefined) throw new ApiError(404, 'NotFound', `GET ${p}: 404 not found`);
      return structuredClone(o) as T;
    },
  };
}

const kubernetes = { metadata: { name: 'kubernetes', namespace: 'default' }, spec: { clusterIP: '10.96.0.1', ports: [{ port: 443 }] } };
const db = { metadata: { name: 'db', namespace: 'shop' }, spec: { clusterIP: '10.96.0.9', ports: [{ port: 5432 }] } };
const other = { metadata: { name: 'web', namespace: 'default' }, spec: { clusterIP: '10.96.0.7', ports: [{ port: 80 }] } };
const lister = (synced = true): ServiceLister => ({
  synced: () => synced,
  inNamespace: (ns) => [kubernetes, db, other].filter((s) => s.metadata.namespace === ns),
});
const objects = {
  '/api/v1/namespaces/shop/configmaps/cfg': { metadata: { name: 'cfg' }, data: { a: '1' } },
  '/api/v1/namespaces/shop/secrets/locked': new ApiError(403, 'Forbidden', 'GET /api/v1/namespaces/shop/secrets/locked: 403 forbidden'),
};
const pod = (spec: Partial<NonNullable<Pod['spec']>> = {}): Pod => ({
  metadata: { name: 'p', namespace: 'shop', uid: 'u' },
  spec: { containers: [], ...spec },
});
const c: Container = {
  name: 'main',
  envFrom: [{ configMapRef: { name: 'cfg' } }, { configMapRef: { name: 'gone', optional: true } }],
  env: [
    { name: 'S', valueFrom: { secretKeyRef: { name: 'locked', key: 'k' } } },
    { name: 'A', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'a' } } },
  ],
};

test('reads what the container names, once per sync; 404 is absence, other failures are kept', async () => {
  const api = fakeApi(objects);
  const source = apiEnvSource(api, () => ({ status: { allocatable: { cpu: '2' } } }), lister());
  const reads = source.session();
  const r = await reads(pod(), c);
  await reads(pod(), { ...c, name: 'second' });
  assert.deepEqual(r.configMaps.get('cfg'), { found: objects['/api/v1/namespaces/shop/configmaps/cfg'] });
  assert.deepEqual(r.configMaps.get('gone'), { notFound: true });
  assert.deepEqual(r.secrets.get('locked'), { error: 'GET /api/v1/namespaces/shop/secrets/locked: 403 forbidden' });
  assert.deepEqual(
    (r.services as { metadata?: { name?: string; namespace?: string } }[]).map((s) => `${s.metadata?.namespace}/${s.metadata?.name}`),
    ['shop/db', 'default/kubernetes'],
  );
  assert.deepEqual(r.allocatable, { cpu: '2' });
  assert.equal(api.calls.length, new Set(api.calls).size, `one request per object: ${api.calls.join(' ')}`);
  await source.session()(pod(), c);
  assert.equal(api.calls.filter((p) => p.endsWith('/configmaps/cfg')).length, 2, 'a new sync reads again');
});

test("podServices: the namespace's Services with service links, default/kubernetes always; a pod from the apiserver waits for the first list", () => {
  const names = (r: ReturnType<typeof podServices>) =>
    Array.isArray(r) ? r.map((s) => `${s.metadata?.namespace}/${s.metadata?.name}`) : r;
  const inDefault: Pod = { ...pod(), metadata: { name: 'p', namespace: 'default' } };
  const staticPod: Pod = { ...pod(), metadata: { ...pod().metadata, annotations: { 'kubernetes.io/config.source': 'file' } } };
  const rows: [string, Pod, ServiceLister, ReturnType<typeof names>][] = [
    ['service links', pod(), lister(), ['shop/db', 'default/kubernetes']],
    ['no service links', pod({ enableServiceLinks: false }), lister(), ['default/kubernetes']],
    [
      'in default: kubernetes is among its own (selectServices keeps one)',
      inDefault,
      lister(),
      ['default/kubernetes', 'default/web', 'default/kubernetes'],
    ],
    ['not listed yet', pod(), lister(false), { error: 'services have not yet been read at least once, cannot construct envvars' }],
    ['not listed yet, a static pod', staticPod, lister(false), ['shop/db', 'default/kubernetes']],
  ];
  for (const [name, p, l, want] of rows) assert.deepEqual(names(podServices(p, l)), want, name);
});

test('while the apiserver cannot be reached, the last answer stands; a refusal or a 404 does not keep it', async () => {
  const now: Record<string, unknown> = { ...objects, '/api/v1/namespaces/shop/secrets/locked': { metadata: { name: 'locked' }, data: {} } };
  const api = fakeApi(now);
  const source = apiEnvSource(api, () => undefined, lister());
  const before = await source.session()(pod(), c);
  assert.deepEqual(before.secrets.get('locked'), { found: { metadata: { name: 'locked' }, data: {} } });
  const down = new ApiError(0, 'Unreachable', 'GET: timed out after 30000 ms');
  for (const p of Object.keys(now)) now[p] = down;
  const during = await source.session()(pod(), c);
  assert.deepEqual(during.configMaps.get('cfg'), before.configMaps.get('cfg'));
  now['/api/v1/namespaces/shop/configmaps/cfg'] = new ApiError(403, 'Forbidden', 'GET cfg: 403 forbidden');
  now['/api/v1/namespaces/shop/secrets/locked'] = new ApiError(404, 'NotFound', 'GET locked: 404');
  const refused = await source.session()(pod(), c);
  assert.deepEqual(refused.configMaps.get('cfg'), { error: 'GET cfg: 403 forbidden' });
  assert.deepEqual(refused.secrets.get('locked'), { notFound: true });
  now['/api/v1/namespaces/shop/configmaps/cfg'] = down;
  now['/api/v1/namespaces/shop/secrets/locked'] = down;
  const after = await source.session()(pod(), c);
  assert.deepEqual(after.configMaps.get('cfg'), { error: 'GET: timed out after 30000 ms' }, 'what was refused does not come back');
  assert.deepEqual(after.secrets.get('locked'), { error: 'GET: timed out after 30000 ms' }, 'what was deleted does not come back');
});
