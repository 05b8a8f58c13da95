// The kubelet's caches filled as upstream's reflectors fill them in v1.36 (client-go's
// WatchListClient gate, on): each list comes as a watch's initial events (sendInitialEvents,
// resourceVersionMatch NotOlderThan), served from the apiserver's watch cache with no list
// built; with the gate off, a list then a watch. Read in the apiserver's audit log, as an
// operator checking what a kubelet costs the apiserver would.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { ROOT, ensureStack, eventually, nodeName, restartKubelet } from './stack.ts';

before(() => ensureStack());
after(() => restartKubelet());

const LOGS = `${ROOT}/_output/local/logs`;
interface AuditEvent {
  auditID: string;
  user: { username: string };
  userAgent?: string;
  verb: string;
  requestURI: string;
  objectRef?: { resource?: string };
  requestReceivedTimestamp: string;
}

/** The kubelet's reads of pods, its Node and services received since `since` (ms), one per request. */
function kubeletReads(since: number): { verb: string; resource: string; watchList: boolean }[] {
  const me = `system:node:${nodeName()}`;
  const seen = new Set<string>();
  return readdirSync(LOGS)
    .filter((f) => f.startsWith('kube-apiserver-audit'))
    .flatMap((f) => readFileSync(`${LOGS}/${f}`, 'utf8').split('\n'))
    .filter((l) => l.includes(me))
    .map((l) => JSON.parse(l) as AuditEvent)
    .filter(
      (e) =>
        e.user.username === me &&
        e.userAgent?.startsWith('kubelet-ts') &&
        Date.parse(e.requestReceivedTimestamp) >= since &&
        ['pods', 'nodes', 'services'].includes(e.objectRef?.resource ?? '') &&
        (e.verb === 'list' || e.verb === 'watch') &&
        !seen.has(e.auditID) &&
        seen.add(e.auditID),
    )
    .map((e) => ({ verb: e.verb, resource: e.objectRef!.resource!, watchList: e.requestURI.includes('sendInitialEvents=true') }));
}
const RESOURCES = ['nodes', 'pods', 'services'];
const kinds = (reads: ReturnType<typeof kubeletReads>, pick: (r: (typeof reads)[number]) => boolean) =>
  [...new Set(reads.filter(pick).map((r) => r.resource))].sort();

test("WatchListClient: the kubelet's pods, Node and services come as watches' initial events; with the gate off, as lists", async () => {
  // From the restart on: the restarts of the tests before come seconds apart.
  const started = Date.now();
  restartKubelet();
  const reads = await eventually('watch-lists of pods, the Node and services in the audit log', 60_000, async () => {
    const r = kubeletReads(started);
    return kinds(r, (x) => x.watchList).length === RESOURCES.length ? r : undefined;
  });
  assert.deepEqual(
    kinds(reads, (x) => x.verb === 'list'),
    [],
    'no list',
  );
  assert.ok(
    reads.filter((r) => r.watchList).every((r) => r.verb === 'watch'),
    'a watch-list is a watch',
  );

  const off = Date.now();
  restartKubelet('featureGates: {WatchListClient: false}\n');
  const lists = await eventually('lists of pods, the Node and services in the audit log', 60_000, async () => {
    const r = kubeletReads(off);
    return kinds(r, (x) => x.verb === 'list').length === RESOURCES.length ? r : undefined;
  });
  assert.deepEqual(
    kinds(lists, (x) => x.watchList),
    [],
    'no watch-list with the gate off',
  );
});
