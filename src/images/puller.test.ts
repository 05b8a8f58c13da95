import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod, Secret } from 'kubernetes-types/core/v1.js';
import { CriError } from '../cri/error.ts';
import { ImagePuller, podCredentials, pulledWith, pullPolicy, type ImageEvent, type ImageService } from './puller.ts';
import { PullSlots } from './pull-slots.ts';
import { credentialHash, keyringOf, lookup, makeKeyring } from './keyring.ts';
import { PulledImages } from './pulled/manager.ts';
import { compileAllowlist } from './pulled/policy.ts';
import { MemoryRecords } from './pulled/testing.ts';

test('default imagePullPolicy, as the apiserver would default it', () => {
  const cases: [string, string | undefined, string][] = [
    ['busybox', undefined, 'Always'],
    ['busybox:latest', undefined, 'Always'],
    ['docker.io/library/busybox:1.36', undefined, 'IfNotPresent'],
    ['localhost:5000/app', undefined, 'Always'],
    ['localhost:5000/app:v2', undefined, 'IfNotPresent'],
    ['busybox@sha256:abc', undefined, 'IfNotPresent'],
    ['busybox:latest', 'Never', 'Never'],
  ];
  for (const [image, policy, want] of cases) assert.equal(pullPolicy({ image, imagePullPolicy: policy }), want, image);
});

type PullRequest = { image?: { image?: string } | null; auth?: Record<string, string> | null };

/** A runtime whose registry accepts only user "ok" and records each PullImage's auth. */
function fakeRuntime(present = false) {
  const pulls: (Record<string, string> | undefined)[] = [];
  let pulled = false;
  const images: ImageService = {
    imageStatus: async () =>
      ({ image: present ? { id: 'sha256:here' } : pulled ? { id: 'sha256:pulled', size: '4269694' } : null, info: {} }) as never,
    pullImage: async (req: PullRequest) => {
      pulls.push(req.auth ?? undefined);
      pulled = req.auth?.username === 'ok';
      if (pulled) return { imageRef: 'sha256:pulled' };
      throw new CriError('PullImage', 2, `401 Unauthorized (as ${req.auth?.username ?? 'anonymous'})`);
    },
  } as never;
  return { images, pulls };
}

const b64 = (s: string) => Buffer.from(s).toString('base64');
const pullSecret = (name: string, auths: Record<string, unknown>): Secret => ({
  metadata: { name, namespace: 'team' },
  type: 'kubernetes.io/dockerconfigjson',
  data: { '.dockerconfigjson': b64(JSON.stringify({ auths })) },
});
const podWith = (...names: string[]): Pod => ({
  metadata: { name: 'p', namespace: 'team', uid: 'u1' },
  spec: { containers: [], imagePullSecrets: names.map((name) => ({ name })) },
});
const IMAGE = 'reg.example:5000/team/app:1';

async function run(secrets: Record<string, Secret>, pod: Pod | undefined, opts: { present?: boolean; policy?: string } = {}) {
  const rt = fakeRuntime(opts.present);
  const asked: string[] = [];
  const puller = new ImagePuller(rt.images, {
    secrets: async (ns, name) => {
      asked.push(`${ns}/${name}`);
      if (secrets[name]) return secrets[name];
      throw new Error(`secrets "${name}" not found`);
    },
  });
  const events: ImageEvent[] = [];
  const result = await puller.ensure({ image: IMAGE, imagePullPolicy: opts.policy }, 'u1/c', (e) => events.push(e), pod);
  return { result, pulls: rt.pulls, events, asked };
}

test('pulls: each matching credential in turn, anonymous only when none match, failures aggregated', async () => {
  const good = pullSecret('good', { 'reg.example:5000': { username: 'ok', password: 'pw' } });
  const bad = pullSecret('bad', { 'reg.example:5000/team': { auth: b64('nope:pw') } });
  const other = pullSecret('other', { 'elsewhere.example': { username: 'ok', password: 'pw' } });
  const cases: {
    name: string;
    pod?: Pod;
    present?: boolean;
    want: { imageRef?: string; reason?: string; message?: string };
    pulls: (string | undefined)[];
    asked: string[];
  }[] = [
    { name: 'no pod given', want: { reason: 'ErrImagePull', message: '401 Unauthorized (as anonymous)' }, pulls: [undefined], asked: [] },
    { name: 'no imagePullSecrets', pod: podWith(), want: { reason: 'ErrImagePull' }, pulls: [undefined], asked: [] },
    { name: 'the right secret', pod: podWith('good'), want: { imageRef: 'sha256:pulled' }, pulls: ['ok'], asked: ['team/good'] },
    {
      name: 'more specific key first, then the next',
      pod: podWith('good', 'bad'),
      want: { imageRef: 'sha256:pulled' },
      pulls: ['nope', 'ok'],
      asked: ['team/good', 'team/bad'],
    },
    {
      name: 'only a wrong credential: no anonymous retry',
      pod: podWith('bad'),
      want: { reason: 'ErrImagePull', message: '401 Unauthorized (as nope)' },
      pulls: ['nope'],
      asked: ['team/bad'],
    },
    {
      name: 'a secret for another registry: anonymous',
      pod: podWith('other'),
      want: { reason: 'ErrImagePull' },
      pulls: [undefined],
      asked: ['team/other'],
    },
    {
      name: 'missing secret is not fatal',
      pod: podWith('absent', 'good'),
      want: { imageRef: 'sha256:pulled' },
      pulls: ['ok'],
      asked: ['team/absent', 'team/good'],
    },
    {
      name: 'image present: secrets not read',
      pod: podWith('good'),
      present: true,
      want: { imageRef: 'sha256:here' },
      pulls: [],
      asked: [],
    },
  ];
  for (const c of cases) {
    const r = await run({ good, bad, other }, c.pod, { present: c.present });
    assert.equal(r.result.imageRef, c.want.imageRef, c.name);
    assert.equal(r.result.waiting?.reason, c.want.reason, c.name);
    if (c.want.message) assert.equal(r.result.waiting?.message, c.want.message, c.name);
    assert.deepEqual(
      r.pulls.map((a) => a?.username),
      c.pulls,
      c.name,
    );
    assert.deepEqual(r.asked, c.asked, c.name);
  }
});

test('pulls: the CRI AuthConfig carries the decoded credential; two failures read as an aggregate', async () => {
  const both = pullSecret('both', {
    'reg.example:5000/team': { username: 'first', password: 'p1', identitytoken: 'idt' },
    'reg.example:5000': { auth: b64('second:p2') },
  });
  const r = await run({ both }, podWith('both'));
  assert.deepEqual(r.pulls, [
    { username: 'first', password: 'p1', identityToken: 'idt' },
    { username: 'second', password: 'p2' },
  ]);
  const message = '[401 Unauthorized (as first), 401 Unauthorized (as second)]';
  assert.deepEqual(r.result.waiting, { reason: 'ErrImagePull', message });
  assert.deepEqual(
    r.events.map((e) => [e.reason, e.message]),
    [
      ['Pulling', `Pulling image "${IMAGE}"`],
      ['Failed', `Failed to pull image "${IMAGE}": ${message}`],
    ],
  );
});

test('pulls: an unreadable secret warns on the pod; a malformed one fails the pull without calling the runtime', async () => {
  const missing = await run({}, podWith('absent', 'gone'));
  const warn = missing.events.find((e) => e.reason === 'FailedToRetrieveImagePullSecret');
  assert.deepEqual(warn, {
    type: 'Warning',
    reason: 'FailedToRetrieveImagePullSecret',
    onPod: true,
    message: 'Unable to retrieve some image pull secrets (absent, gone); attempting to pull the image may not succeed.',
  });
  assert.deepEqual(missing.pulls, [undefined]);

  const broken: Secret = {
    metadata: { name: 'broken', namespace: 'team' },
    type: 'kubernetes.io/dockerconfigjson',
    data: { '.dockerconfigjson': b64('{nope') },
  };
  const r = await run({ broken }, podWith('broken'));
  assert.deepEqual(r.pulls, []);
  assert.equal(r.result.waiting?.reason, 'ErrImagePull');
  assert.match(r.result.waiting!.message!, /^secret team\/broken: \.dockerconfigjson is not valid JSON/);
});

test("pulls: a pull that succeeds reports upstream's words, its time with the wait, and the image size", async () => {
  const r = await run({ good: pullSecret('good', { 'reg.example:5000': { auth: b64('ok:pw') } }) }, podWith('good'));
  assert.deepEqual(r.result, { imageRef: 'sha256:pulled', user: { uid: 0 } });
  assert.deepEqual(r.events[0], { type: 'Normal', reason: 'Pulling', message: `Pulling image "${IMAGE}"` });
  assert.equal(r.events.length, 2);
  assert.match(
    r.events[1]!.message,
    /^Successfully pulled image "reg\.example:5000\/team\/app:1" in (\d+ms|\d+(\.\d+)?s) \((\d+ms|\d+(\.\d+)?s) including waiting\)\. Image size: 4269694 bytes\.$/,
  );
});

// serializeImagePulls (upstream's serialImagePuller): the second pull waits for the first, and says so.
test('pulls: with one slot a second pull starts when the first ends, its wait in "including waiting"', async () => {
  let finishFirst!: () => void;
  const started: string[] = [];
  const images: ImageService = {
    imageStatus: async () => ({ image: null, info: {} }) as never,
    pullImage: async (req: PullRequest) => {
      started.push(req.image!.image!);
      if (started.length === 1) await new Promise<void>((r) => (finishFirst = r));
      return { imageRef: `sha256:${started.length}` };
    },
  } as never;
  const puller = new ImagePuller(images, { slots: new PullSlots(1) });
  const events: ImageEvent[] = [];
  const first = puller.ensure({ image: 'a:1' }, 'u/a', (e) => events.push(e));
  const second = puller.ensure({ image: 'b:1' }, 'u/b', (e) => events.push(e));
  await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(started, ['a:1'], 'b waits for its turn');
  finishFirst();
  await Promise.all([first, second]);
  assert.deepEqual(started, ['a:1', 'b:1']);
  const pulledB = events.find((e) => e.reason === 'Pulled' && e.message.includes('"b:1"'))!.message;
  // Its pull took no time: the rest was the wait.
  const [, total] = /in (?:0s|\d+ms) \((\d+)ms including waiting\)/.exec(pulledB) ?? [];
  // At least most of the 50 ms wait (b's clock starts once its ImageStatus has answered: late on a loaded machine).
  assert.ok(Number(total) >= 30, pulledB);
});

// upstream's throttledImageService: past registryPullQPS a pull fails at once, and backs off.
test('registryPullQPS: a pull over the limit fails with "pull QPS exceeded" and backs off; the runtime is not asked', async () => {
  const rt = fakeRuntime();
  let tokens = 1;
  const puller = new ImagePuller(rt.images, { limit: { tryAccept: () => tokens-- > 0 } });
  const events: ImageEvent[] = [];
  const emit = (e: ImageEvent) => events.push(e);
  const first = await puller.ensure({ image: IMAGE, imagePullPolicy: 'IfNotPresent' }, 'u1/a', emit);
  assert.equal(first.waiting?.reason, 'ErrImagePull', 'the first is pulled (and refused by the registry)');
  assert.equal(rt.pulls.length, 1);
  const second = await puller.ensure({ image: IMAGE, imagePullPolicy: 'IfNotPresent' }, 'u2/a', emit);
  assert.deepEqual(second.waiting, { reason: 'ErrImagePull', message: 'pull QPS exceeded' });
  assert.equal(rt.pulls.length, 1, 'no second PullImage');
  assert.equal(events.at(-1)?.message, `Failed to pull image "${IMAGE}": pull QPS exceeded`);
  const third = await puller.ensure({ image: IMAGE, imagePullPolicy: 'IfNotPresent' }, 'u2/a', emit);
  // The back-off says what failed, as upstream's waiting message; its event does not.
  assert.deepEqual(third.waiting, {
    reason: 'ImagePullBackOff',
    message: `Back-off pulling image "${IMAGE}": ErrImagePull: pull QPS exceeded`,
  });
  assert.equal(events.at(-1)?.message, `Back-off pulling image "${IMAGE}"`);
});

test("credentials: the pod's secrets, then the node's docker config, then the credential providers, each tried in turn", async () => {
  const rt = fakeRuntime();
  const asked: unknown[] = [];
  const puller = new ImagePuller(rt.images, {
    secrets: async () => pullSecret('mine', { 'reg.example:5000': { username: 'from-secret', password: 'a' } }),
    nodeKeyring: { get: () => [{ key: 'reg.example:5000', auths: [{ username: 'from-node', password: 'b' }] }] },
    providers: {
      lookup: async (repository, pod) => {
        asked.push([repository, pod]);
        return [{ username: 'ok', password: 'from-plugin' }];
      },
    },
  });
  const pod: Pod = { ...podWith('mine'), spec: { containers: [], imagePullSecrets: [{ name: 'mine' }], serviceAccountName: 'builder' } };
  const result = await puller.ensure({ image: IMAGE }, 'u1/c', () => {}, pod);
  assert.deepEqual(rt.pulls, [
    { username: 'from-secret', password: 'a' },
    { username: 'from-node', password: 'b' },
    { username: 'ok', password: 'from-plugin' },
  ]);
  assert.equal(result.imageRef, 'sha256:pulled');
  // The providers are asked for the repository (no tag), with the pod for token mode.
  assert.deepEqual(asked, [['reg.example:5000/team/app', { namespace: 'team', name: 'p', uid: 'u1', serviceAccountName: 'builder' }]]);
});

test('credentials: a pod without secrets pulls with the providers alone; none anywhere is anonymous', async () => {
  const withPlugin = fakeRuntime();
  await new ImagePuller(withPlugin.images, { providers: { lookup: async () => [{ username: 'ok', password: 'p' }] } }).ensure(
    { image: IMAGE },
    'u1/c',
    () => {},
    podWith(),
  );
  assert.deepEqual(withPlugin.pulls, [{ username: 'ok', password: 'p' }]);
  const none = fakeRuntime();
  const r = await new ImagePuller(none.images, { providers: { lookup: async () => [] }, nodeKeyring: { get: () => [] } }).ensure(
    { image: IMAGE },
    'u1/c',
    () => {},
    podWith(),
  );
  assert.deepEqual(none.pulls, [undefined]);
  assert.deepEqual(r.waiting, { reason: 'ErrImagePull', message: '401 Unauthorized (as anonymous)' });
});

// KEP-2535: a runtime that has the image once anyone pulled it, and records who was allowed.
function sharedNode(policy: 'NeverVerifyPreloadedImages' | 'AlwaysVerify' = 'NeverVerifyPreloadedImages', preloaded = false) {
  const records = new MemoryRecords();
  const pulled = new PulledImages({ records, policy, allowlist: compileAllowlist([]) });
  let present = preloaded;
  const pulls: (string | undefined)[] = [];
  const images: ImageService = {
    imageStatus: async () => ({ image: present ? { id: 'sha256:img', size: '42' } : null, info: {} }) as never,
    pullImage: async (req: PullRequest) => {
      pulls.push(req.auth?.username);
      if (req.auth?.username !== 'ok') throw new CriError('PullImage', 2, `401 Unauthorized (as ${req.auth?.username ?? 'anonymous'})`);
      present = true;
      return { imageRef: 'sha256:img' };
    },
  } as never;
  const secrets: Record<string, Secret> = {
    'team/right': {
      ...pullSecret('right', { 'reg.example:5000': { username: 'ok', password: 'pw' } }),
      metadata: { name: 'right', namespace: 'team', uid: 's1' },
    },
    'other/own': {
      ...pullSecret('own', { 'reg.example:5000': { username: 'ok', password: 'pw' } }),
      metadata: { name: 'own', namespace: 'other', uid: 's2' },
    },
    'other/wrong': {
      ...pullSecret('wrong', { 'reg.example:5000': { username: 'nope', password: 'pw' } }),
      metadata: { name: 'wrong', namespace: 'other', uid: 's3' },
    },
  };
  const puller = new ImagePuller(images, {
    pulled,
    secrets: async (ns, name) => {
      const s = secrets[`${ns}/${name}`];
      if (!s) throw new Error(`secrets "${name}" not found`);
      return s;
    },
  });
  const ensure = async (namespace: string, uid: string, secretNames: string[], imagePullPolicy = 'IfNotPresent') => {
    const events: ImageEvent[] = [];
    const pod: Pod = {
      metadata: { name: 'p', namespace, uid },
      spec: { containers: [], imagePullSecrets: secretNames.map((name) => ({ name })) },
    };
    const result = await puller.ensure({ image: IMAGE, imagePullPolicy }, `${uid}/c`, (e) => events.push(e), pod);
    return { result, events: events.map((e) => `${e.reason}: ${e.message}`) };
  };
  return { ensure, pulls, records };
}

test("ensure-image requests: each recorded once with its policy, whether the image was found, whether it had to be pulled (upstream's recordEnsureImageRequest)", async () => {
  const cases: [image: string, policy: string, present: boolean, want: [string, boolean | undefined, boolean | undefined]][] = [
    [IMAGE, 'Always', true, ['Always', undefined, true]],
    [IMAGE, 'IfNotPresent', true, ['IfNotPresent', true, false]],
    [IMAGE, 'IfNotPresent', false, ['IfNotPresent', false, true]],
    [IMAGE, 'Never', true, ['Never', true, false]],
    // The precheck ends it: whether a pull was needed is not known.
    [IMAGE, 'Never', false, ['Never', false, undefined]],
    ['Bad Image:1', 'IfNotPresent', false, ['IfNotPresent', undefined, undefined]],
  ];
  for (const [image, policy, present, want] of cases) {
    const seen: unknown[] = [];
    const puller = new ImagePuller(fakeRuntime(present).images, { observe: { ensured: (...a) => seen.push(a) } });
    await puller.ensure({ image, imagePullPolicy: policy }, 'u1/c', () => {});
    assert.deepEqual(seen, [want], `${image} ${policy} ${present ? 'present' : 'absent'}`);
  }
});

test('ensure-secret-pulled-images: another namespace without the secret pulls again and gets ErrImagePull; with its own secret it pulls and runs', async () => {
  const node = sharedNode();
  const a = await node.ensure('team', 'pa', ['right']);
  assert.equal(a.result.imageRef, 'sha256:img');
  assert.deepEqual(node.records.getPulled('sha256:img')?.credentialMapping['reg.example:5000/team/app']?.kubernetesSecrets?.[0], {
    uid: 's1',
    namespace: 'team',
    name: 'right',
    credentialHash: credentialHash('ok', 'pw', ''),
  });
  assert.deepEqual(node.records.listIntents(), [], 'the intent went with the record');
  // Pod B: IfNotPresent, the image is there, but it has no credentials: pulled anonymously, refused.
  const b = await node.ensure('other', 'pb', []);
  assert.equal(b.result.waiting?.reason, 'ErrImagePull');
  assert.equal(b.result.waiting?.message, '401 Unauthorized (as anonymous)');
  assert.deepEqual(b.events, [
    `Pulling: Pulling image "${IMAGE}"`,
    `Failed: Failed to pull image "${IMAGE}": 401 Unauthorized (as anonymous)`,
  ]);
  // With wrong credentials: the same.
  assert.equal((await node.ensure('other', 'pw', ['wrong'])).result.waiting?.reason, 'ErrImagePull');
  // Pod C, its own valid secret (same credentials, another secret): allowed by hash, no pull.
  const c = await node.ensure('other', 'pc', ['own']);
  assert.equal(c.result.imageRef, 'sha256:img');
  assert.deepEqual(c.events, [`Pulled: Container image "${IMAGE}" already present on machine and can be accessed by the pod`]);
  // Pod A again: no pull either.
  assert.equal((await node.ensure('team', 'pa2', ['right'])).result.imageRef, 'sha256:img');
  assert.deepEqual(node.pulls, ['ok', undefined, 'nope']);
  // Never: the image is present but not for this pod.
  const never = await node.ensure('other', 'pn', [], 'Never');
  assert.equal(never.result.waiting?.reason, 'ErrImageNeverPull');
});

test('ensure-secret-pulled-images: a preloaded image runs for anyone with the default policy, AlwaysVerify pulls it', async () => {
  const preloaded = sharedNode('NeverVerifyPreloadedImages', true);
  const r = await preloaded.ensure('other', 'pb', []);
  assert.equal(r.result.imageRef, 'sha256:img');
  assert.deepEqual(preloaded.pulls, []);
  const strict = sharedNode('AlwaysVerify', true);
  assert.equal((await strict.ensure('other', 'pb', [])).result.waiting?.reason, 'ErrImagePull');
  assert.equal((await strict.ensure('team', 'pa', ['right'])).result.imageRef, 'sha256:img');
  assert.deepEqual(strict.pulls, [undefined, 'ok']);
});

test('podCredentials and pulledWith: secrets by coordinates and hash, token-mode service accounts, node-wide for the rest', () => {
  const s: Secret = {
    ...pullSecret('right', { 'reg.example:5000': { username: 'ok', password: 'pw', email: 'e@x' } }),
    metadata: { name: 'right', namespace: 'team', uid: 's1' },
  };
  const [fromSecret] = lookup(makeKeyring([s]), IMAGE);
  const [fromProvider] = lookup(
    keyringOf([
      {
        where: 'p',
        config: { 'reg.example:5000': { username: 'sa' } },
        source: { serviceAccount: { uid: 'sa1', namespace: 'team', name: 'builder' } },
      },
    ]),
    IMAGE,
  );
  const [nodeWide] = lookup(keyringOf([{ where: 'node', config: { 'reg.example:5000': { username: 'n' } } }]), IMAGE);
  const hash = credentialHash('ok', 'pw', 'e@x');
  assert.deepEqual(podCredentials([fromSecret!, nodeWide!, fromProvider!]), {
    secrets: [{ uid: 's1', namespace: 'team', name: 'right', credentialHash: hash }],
    serviceAccount: { uid: 'sa1', namespace: 'team', name: 'builder' },
  });
  assert.deepEqual(pulledWith(fromSecret), { kubernetesSecrets: [{ uid: 's1', namespace: 'team', name: 'right', credentialHash: hash }] });
  assert.deepEqual(pulledWith(fromProvider), { kubernetesServiceAccounts: [{ uid: 'sa1', namespace: 'team', name: 'builder' }] });
  assert.deepEqual(pulledWith(nodeWide), { nodePodsAccessible: true });
  assert.deepEqual(pulledWith(undefined), { nodePodsAccessible: true });
});

test('a long pull is logged as still going until it ends (no deadline cuts it)', async () => {
  const lines: string[] = [];
  const log = {
    info: (msg: string, kv: { elapsed: string }) => lines.push(`${msg} ${kv.elapsed}`),
    v() {},
    warn() {},
    error() {},
  } as never;
  const images: ImageService = {
    imageStatus: async () => ({ image: { id: 'sha256:big', size: '1' }, info: {} }) as never,
    pullImage: () => new Promise((resolve) => setTimeout(() => resolve({ imageRef: 'sha256:big' }), 130)),
  } as never;
  const puller = new ImagePuller(images, { log, progressLogMs: 50 });
  const r = await puller.ensure({ image: 'r.io/big:1', imagePullPolicy: 'Always' }, 'u/c', () => {});
  assert.equal(r.imageRef, 'sha256:big');
  // Every 50 ms of a 130 ms pull: twice, once on a loaded machine.
  const n = lines.length;
  assert.ok(n >= 1 && n <= 2, lines.join('\n'));
  assert.match(lines[0]!, /^Image pull still in progress \d+ms$/);
  await new Promise((resolve) => setTimeout(resolve, 120));
  assert.equal(lines.length, n, 'not after the pull');
});

// Upstream's CRI client strips the code of an Unknown error only; the others keep grpc-go's words.
test("pulls: a failure other than Unknown reads as upstream's, with grpc-go's code", async () => {
  const images: ImageService = {
    imageStatus: async () => ({ image: null, info: {} }) as never,
    pullImage: async () => {
      throw new CriError('PullImage', 5, 'failed to pull and unpack image "a:1": not found');
    },
  } as never;
  const events: ImageEvent[] = [];
  const r = await new ImagePuller(images, {}).ensure({ image: 'a:1' }, 'u/a', (e) => events.push(e));
  const message = 'rpc error: code = NotFound desc = failed to pull and unpack image "a:1": not found';
  assert.deepEqual(r.waiting, { reason: 'ErrImagePull', message });
  assert.equal(events.at(-1)?.message, `Failed to pull image "a:1": ${message}`);
});
