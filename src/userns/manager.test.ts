// UserNamespaces against a scratch root dir and /etc: what it writes where, what it reads back
// at start, and the refusals a sync turns into FailedCreatePodSandBox.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { type HandlerLookup, UserNamespaces } from './manager.ts';

const N = 65536;
const silent = { info() {}, v() {}, warn() {}, error() {} };
const pod = (uid: string, hostUsers?: boolean): Pod => ({
  metadata: { name: uid, namespace: 'ns', uid },
  spec: { containers: [], hostUsers },
});
const supported: HandlerLookup = async () => ({ handler: '', handlers: [{ name: '', features: { userNamespaces: true } }] });

/** A root dir and an /etc with the user "kubelet" owning three pods' worth of IDs from 2N; maxPods 3. */
function scratch(t: { after(fn: () => void): void }, over: { subuid?: string; subgid?: string; idsPerPod?: number } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'kts-userns-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const rootDir = join(dir, 'root'),
    etcDir = join(dir, 'etc');
  mkdirSync(etcDir);
  writeFileSync(join(etcDir, 'passwd'), 'kubelet:x:998:998::/:/bin/false\n');
  writeFileSync(join(etcDir, 'subuid'), over.subuid ?? `kubelet:${2 * N}:${3 * N}\n`);
  writeFileSync(join(etcDir, 'subgid'), over.subgid ?? `kubelet:${2 * N}:${3 * N}\n`);
  const load = () => UserNamespaces.load({ rootDir, etcDir, maxPods: 3, idsPerPod: over.idsPerPod, log: silent, random: () => 0 });
  const file = (uid: string) => join(rootDir, 'pods', uid, 'userns');
  return { rootDir, load, file };
}

test("hostUsers unset or true: the node's user namespace, nothing allocated or asked", async (t) => {
  const s = scratch(t);
  const m = s.load();
  const never: HandlerLookup = async () => assert.fail('the handler is not asked');
  assert.deepEqual(await m.forPod(pod('a'), never), { mode: 'NODE' });
  assert.deepEqual(await m.forPod(pod('b', true), never), { mode: 'NODE' });
  assert.equal(existsSync(join(s.rootDir, 'pods')), false);
});

test('hostUsers false: a range written to ROOT/pods/UID/userns, the same on every sync, read back at start, freed on release', async (t) => {
  const s = scratch(t);
  const m = s.load();
  const want = (hostId: number) => ({
    mode: 'POD',
    uids: [{ hostId, containerId: 0, length: N }],
    gids: [{ hostId, containerId: 0, length: N }],
  });
  assert.deepEqual(await m.forPod(pod('a', false), supported), want(2 * N));
  assert.deepEqual(await m.forPod(pod('a', false), async () => assert.fail('asked once')), want(2 * N));
  assert.deepEqual(await m.forPod(pod('b', false), supported), want(3 * N));
  assert.equal(
    readFileSync(s.file('a'), 'utf8'),
    `{"uidMappings":[{"hostId":${2 * N},"containerId":0,"length":${N}}],"gidMappings":[{"hostId":${2 * N},"containerId":0,"length":${N}}]}`,
  );
  assert.deepEqual(readdirSync(join(s.rootDir, 'pods', 'a')), ['userns'], 'no temporary file left');

  // A restarted kubelet keeps every pod on its range, and hands out only what is free.
  mkdirSync(join(s.rootDir, 'pods', 'no-userns'));
  const again = s.load();
  assert.deepEqual(await again.forPod(pod('b', false), async () => assert.fail('b holds a range')), want(3 * N));
  assert.deepEqual(await again.forPod(pod('c', false), supported), want(4 * N));
  await assert.rejects(again.forPod(pod('d', false), supported), {
    message: 'create user namespace: could not find an empty slot to allocate a user namespace',
  });
  assert.equal(existsSync(s.file('d')), false);

  again.release('a');
  assert.equal(existsSync(s.file('a')), false);
  again.release('a'); // nothing left: nothing happens
  again.release('gone');
  assert.deepEqual(await again.forPod(pod('d', false), supported), want(2 * N));
});

test("a runtime handler without user namespaces: refused with upstream's words, nothing allocated", async (t) => {
  const s = scratch(t);
  const m = s.load();
  await assert.rejects(
    m.forPod(pod('a', false), async () => ({ handler: '', handlers: [] })),
    { message: "can't set `spec.hostUsers: false`, runtime does not support user namespaces" },
  );
  await assert.rejects(
    m.forPod(pod('a', false), async () => ({ handler: 'kata', handlers: [{ name: '', features: { userNamespaces: true } }] })),
    {
      message:
        'can\'t set `spec.hostUsers: false`, RuntimeClass handler "kata" does not support user namespaces: the handler "kata" is not known',
    },
  );
  assert.equal(existsSync(s.file('a')), false);
});

test("the start fails as upstream's: a bad range, a bad or clashing file", (t) => {
  const bad = scratch(t, { subuid: `kubelet:${2 * N}:${N}\n` });
  assert.throws(bad.load, {
    message: 'create user namespace manager: kubelet mappings: mismatched subuids and subgids for user "kubelet"',
  });

  const s = scratch(t);
  mkdirSync(join(s.rootDir, 'pods', 'a'), { recursive: true });
  writeFileSync(s.file('a'), '{"uidMappings":[],"gidMappings":[]}');
  assert.throws(s.load, {
    message:
      'create user namespace manager: record pod mappings for existing pod "a": invalid user namespace configuration: no more than one mapping allowed.',
  });
  writeFileSync(s.file('a'), ''); // empty: no user namespace
  s.load();
  const range = (hostId: number) =>
    JSON.stringify({ uidMappings: [{ hostId, containerId: 0, length: N }], gidMappings: [{ hostId, containerId: 0, length: N }] });
  writeFileSync(s.file('a'), range(3 * N));
  mkdirSync(join(s.rootDir, 'pods', 'b'));
  writeFileSync(s.file('b'), range(3 * N));
  assert.throws(
    s.load,
    /^Error: create user namespace manager: record pod mappings for existing pod "[ab]": range picked for pod "[ab]" already taken$/,
  );
});

test('maxPods beyond the range: the start fails', (t) => {
  const s = scratch(t);
  assert.throws(() => UserNamespaces.load({ rootDir: s.rootDir, etcDir: join(s.rootDir, '..', 'etc'), maxPods: 4, log: silent }), {
    message: 'create user namespace manager: kubelet user assigned IDs are not enough to support 4 pods',
  });
});

test('userNamespaces.idsPerPod: each pod gets that many IDs, written and read back as such', async (t) => {
  const range = `kubelet:${2 * N}:${6 * N}\n`;
  const s = scratch(t, { subuid: range, subgid: range, idsPerPod: 2 * N });
  const m = s.load();
  const ns = await m.forPod(pod('a', false), supported);
  assert.deepEqual(ns, {
    mode: 'POD',
    uids: [{ hostId: 2 * N, containerId: 0, length: 2 * N }],
    gids: [{ hostId: 2 * N, containerId: 0, length: 2 * N }],
  });
  assert.deepEqual(
    (await s.load().forPod(pod('b', false), supported)).uids,
    [{ hostId: 4 * N, containerId: 0, length: 2 * N }],
    'a restart keeps a on its share',
  );
  // A node whose pods hold 65536 IDs does not start with another share size: upstream's words.
  const other = scratch(t, { subuid: range, subgid: range });
  await other.load().forPod(pod('a', false), supported);
  const c = scratch(t, { subuid: range, subgid: range, idsPerPod: 2 * N });
  mkdirSync(join(c.rootDir, 'pods', 'a'), { recursive: true });
  writeFileSync(c.file('a'), readFileSync(other.file('a')));
  assert.throws(() => c.load(), {
    message: `create user namespace manager: record pod mappings for existing pod "a": wrong user namespace length ${N}`,
  });
});
