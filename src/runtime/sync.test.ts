// PodSyncer over an in-memory runtime (testing.ts): for each starting state of the
// runtime, the CRI calls a sync makes, in order, and what the pod shows (waiting reasons,
// events, when to look again). computePodActions decides; these rows check that the decision
// is carried out as upstream's SyncPod, killPod and removal would.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import type { EnvSource } from './env-sources.ts';
import { type FakeRuntime, fakeSyncer, type SyncerOptions } from './testing.ts';
import { podLogDir } from './pod-config.ts';
import type { SyncResult } from './sync.ts';
import type { Waiting } from '../container/types.ts';
import type { HealthOf } from './actions.ts';
import type { ImageToPull } from '../images/puller.ts';
import type { ImageSpec } from '../cri/generated/runtime/v1/ImageSpec.ts';
import { cgroupLayout } from '../resources/cgroup-layout.ts';
import { status } from '@grpc/grpc-js';
import { CriError } from '../cri/error.ts';

const UID = 'u1';
const a: Container = { name: 'a', image: 'busybox:1.36' };
const b: Container = { name: 'b', image: 'nginx:1.27' };
const init: Container = { name: 'init', image: 'busybox:1.36', command: ['true'] };
const sidecar: Container = { name: 'proxy', image: 'envoy:1.30', restartPolicy: 'Always' };

function pod(spec: Partial<Pod['spec']> = {}, meta: Partial<Pod['metadata']> = {}): Pod {
  return { metadata: { name: 'web', namespace: 'shop', uid: UID, ...meta }, spec: { containers: [a, b], ...spec } };
}

type Harness = ReturnType<typeof fakeSyncer>;

interface Row {
  name: string;
  pod: Pod;
  /** The syncer's other parts (env, volumes, images). */
  with?: SyncerOptions;
  /** What the runtime holds before. */
  given?: (rt: FakeRuntime) => void;
  /** What is done: one sync, unless told. */
  act?: (h: Harness, pod: Pod) => Promise<SyncResult | undefined>;
  /** Every CRI call, in order (FakeRuntime.trace). */
  calls: string[];
  /** Every event, in order, as "Type Reason: message"; [] when none. */
  events: string[];
  /** Waiting containers of the (last) sync; none when absent. */
  waiting?: Record<string, Waiting>;
  /** When to sync again, or the range it must be in; none when absent. */
  requeueAfterMs?: number | [number, number];
  check?: (h: Harness, r: SyncResult | undefined) => void | Promise<void>;
}

const sync = (h: Harness, p: Pod, health?: HealthOf) => h.syncer.syncPod(p, undefined, health);
/** A ready sandbox sb1 with these containers running, as c1, c2, ... */
function running(rt: FakeRuntime, ...cs: Container[]): void {
  rt.addSandbox(UID, { id: 'sb1' });
  for (const [i, c] of cs.entries()) rt.addContainer('sb1', c, { id: `c${i + 1}` });
}
/** An env source whose apiserver holds these ConfigMaps (name -> data) and nothing else. */
const configMaps = (data: Record<string, Record<string, string>>): EnvSource => ({
  session: () => async (_pod, c) => ({
    configMaps: new Map(
      (c.env ?? [])
        .flatMap((e) => (e.valueFrom?.configMapKeyRef ? [e.valueFrom.configMapKeyRef.name!] : []))
        .map((n) => [n, data[n] ? { found: { data: data[n] } } : { notFound: true as const }]),
    ),
    secrets: new Map(),
    services: [],
  }),
});
const volumes = (mountError?: string) => ({
  setUp: async () => ({ ready: true, failed: [] }),
  containerMounts: async () => {
    if (mountError) throw new Error(mountError);
    return [];
  },
  containerDevices: () => [],
  tearDown: async () => {},
});
/** A volume manager whose volumes are all set up: a mount per volumeMount, from /vol/NAME. */
const volumeMounts = {
  setUp: async () => ({ ready: true, failed: [] }),
  containerMounts: async (_p: Pod, c: Container) =>
    (c.volumeMounts ?? []).map((m) => ({ containerPath: m.mountPath, hostPath: `/vol/${m.name}`, readonly: !!m.readOnly })),
  containerDevices: () => [],
  tearDown: async () => {},
};
/** As volumeMounts, an image volume's mount the pulled image (the volume manager's containerMounts). */
const imageVolumeMounts = {
  ...volumeMounts,
  containerMounts: async (_p: Pod, c: Container, ctx: { imageVolumes?: ReadonlyMap<string, ImageSpec> }) =>
    (c.volumeMounts ?? []).map((m) => {
      const image = ctx.imageVolumes?.get(m.name);
      return image
        ? { containerPath: m.mountPath, hostPath: '', image, imageSubPath: m.subPath ?? '', readonly: true }
        : { containerPath: m.mountPath, hostPath: `/vol/${m.name}`, readonly: !!m.readOnly };
    }),
};
// (Volume.image is not in kubernetes-types yet.)
const toolsVolume = { name: 'tools', image: { reference: 'reg.example/tools:1', pullPolicy: 'IfNotPresent' } };
const withImageVolume = (containers: Container[]) => pod({ containers, volumes: [toolsVolume] });
const mountingTools: Container = { ...a, volumeMounts: [{ name: 'tools', mountPath: '/tools', subPath: 'bin' }] };
/** ensure answers these for images by name (else pulled), and records what it was asked. */
function pulls(fail: Record<string, Waiting> = {}) {
  const asked: string[] = [];
  return {
    asked,
    pull: (c: ImageToPull) => {
      asked.push(c.image ?? '');
      const w = fail[c.image ?? ''];
      return w ? { waiting: w } : undefined;
    },
  };
}
const RRO_UNSUPPORTED =
  'failed to resolve recursive read-only mode: volume "mnt" requested recursive read-only mode, but it is not supported by the runtime';
const createdMounts = (h: Harness) =>
  (h.runtime.calls.find((c) => c.method === 'CreateContainer')!.request as { config: { mounts: unknown[] } }).config.mounts;

const rows: Row[] = [
  {
    name: 'a new pod: RunPodSandbox, then each container created and started in spec order',
    pod: pod(),
    calls: [
      'Status',
      'RunPodSandbox shop/web attempt=0',
      'CreateContainer a attempt=0 in sb1',
      'StartContainer c1',
      'CreateContainer b attempt=0 in sb1',
      'StartContainer c2',
    ],
    events: [
      'Normal Created: Container created',
      'Normal Started: Container started',
      'Normal Created: Container created',
      'Normal Started: Container started',
    ],
    check: (h) => {
      const sb = h.runtime.sandbox('sb1')!.config!;
      assert.deepEqual(sb.metadata, { name: 'web', namespace: 'shop', uid: UID, attempt: 0 });
      assert.equal(sb.hostname, 'web');
      assert.equal(sb.logDirectory, `${h.podLogsDir}/shop_web_${UID}`);
      assert.ok(existsSync(sb.logDirectory!), 'the pod log directory is made before the sandbox');
      assert.equal(sb.labels?.['io.kubernetes.pod.uid'], UID);
      assert.equal(sb.linux?.cgroupParent, `/kubepods/besteffort/pod${UID}`);
      assert.deepEqual(h.cgroups, [`ensure /kubepods/besteffort/pod${UID}`], 'the pod cgroup before the sandbox');
      const created = h.runtime.calls.find((c) => c.method === 'CreateContainer')!.request as {
        sandboxConfig: unknown;
        config: { logPath: string };
      };
      assert.equal(created.sandboxConfig, sb, 'CreateContainer gets the sandbox config RunPodSandbox got');
      assert.equal(created.config.logPath, 'a/0.log');
    },
  },
  {
    name: 'a new pod with an init container: it runs to completion before the app containers start',
    pod: pod({ initContainers: [init] }),
    act: async (h, p) => {
      const first = await sync(h, p);
      assert.deepEqual(first.waiting, new Map());
      h.runtime.exit(h.runtime.container('init')!.id, 0);
      return sync(h, p);
    },
    calls: [
      'Status',
      'RunPodSandbox shop/web attempt=0',
      'CreateContainer init attempt=0 in sb1',
      'StartContainer c1',
      'CreateContainer a attempt=0 in sb1',
      'StartContainer c2',
      'CreateContainer b attempt=0 in sb1',
      'StartContainer c3',
    ],
    events: [
      'Normal Created: Container created',
      'Normal Started: Container started',
      'Normal Created: Container created',
      'Normal Started: Container started',
      'Normal Created: Container created',
      'Normal Started: Container started',
    ],
  },
  {
    name: 'a running pod that needs nothing: no CRI calls',
    pod: pod(),
    given: (rt) => running(rt, a, b),
    calls: [],
    events: [],
    check: (_h, r) =>
      assert.deepEqual(
        r!.runtime.containers.map((c) => [c.name, c.phase]),
        [
          ['b', 'running'],
          ['a', 'running'],
        ],
      ),
  },
  {
    name: 'restartPolicy Always, a container exited: a new instance with attempt+1 in the same sandbox',
    pod: pod(),
    given: (rt) => {
      running(rt, b);
      rt.addContainer('sb1', a, { id: 'c9', phase: 'exited', exitCode: 1 });
    },
    calls: ['CreateContainer a attempt=1 in sb1', 'StartContainer c2'],
    events: ['Normal Created: Container created', 'Normal Started: Container started'],
    check: (h) => assert.equal(h.runtime.container('a')!.config!.annotations!['io.kubernetes.container.restartCount'], '1'),
  },
  {
    name: 'restartPolicy Always, the second exit within the back-off: CrashLoopBackOff, a BackOff event, no new container',
    pod: pod(),
    given: (rt) => {
      running(rt, b);
      rt.addContainer('sb1', a, { id: 'c9', phase: 'exited', exitCode: 1 });
    },
    act: async (h, p) => {
      await sync(h, p);
      h.runtime.exit(h.runtime.container('a')!.id, 1);
      return sync(h, p);
    },
    calls: ['CreateContainer a attempt=1 in sb1', 'StartContainer c2'],
    events: [
      'Normal Created: Container created',
      'Normal Started: Container started',
      `Warning BackOff: Back-off restarting failed container a in pod web_shop(${UID})`,
    ],
    waiting: { a: { reason: 'CrashLoopBackOff', message: `back-off 10s restarting failed container=a pod=web_shop(${UID})` } },
    requeueAfterMs: [9_000, 10_000],
  },
  {
    // The e2e "back-off timer reset on image update": upstream's GetBackoffKey holds the image.
    name: 'restartPolicy Always, a new image while in CrashLoopBackOff: a fresh back-off, the container restarts at once',
    pod: pod(),
    given: (rt) => {
      running(rt, b);
      rt.addContainer('sb1', a, { id: 'c9', phase: 'exited', exitCode: 1 });
    },
    act: async (h, p) => {
      await sync(h, p);
      h.runtime.exit(h.runtime.container('a')!.id, 1);
      assert.equal((await sync(h, p)).waiting.get('a')?.reason, 'CrashLoopBackOff');
      const updated = pod({ containers: [{ ...a, image: 'nginx:1.27' }, b] });
      return sync(h, updated);
    },
    calls: ['CreateContainer a attempt=1 in sb1', 'StartContainer c2', 'CreateContainer a attempt=2 in sb1', 'StartContainer c3'],
    events: [
      'Normal Created: Container created',
      'Normal Started: Container started',
      `Warning BackOff: Back-off restarting failed container a in pod web_shop(${UID})`,
      'Normal Created: Container created',
      'Normal Started: Container started',
    ],
  },
  {
    name: 'restartPolicy Never: an exited container is not restarted',
    pod: pod({ restartPolicy: 'Never' }),
    given: (rt) => {
      running(rt, b);
      rt.addContainer('sb1', a, { phase: 'exited', exitCode: 1 });
    },
    calls: [],
    events: [],
  },
  {
    name: 'restartPolicy OnFailure: a container that succeeded is not restarted, one that failed is',
    pod: pod({ restartPolicy: 'OnFailure' }),
    given: (rt) => {
      const sb = rt.addSandbox(UID, { id: 'sb1' });
      rt.addContainer(sb, a, { id: 'c8', phase: 'exited', exitCode: 0 });
      rt.addContainer(sb, b, { id: 'c9', phase: 'exited', exitCode: 2 });
    },
    calls: ['CreateContainer b attempt=1 in sb1', 'StartContainer c1'],
    events: ['Normal Created: Container created', 'Normal Started: Container started'],
  },
  {
    name: 'a new pod with a sidecar: the sandbox and the sidecar, then a sync at once, which the app containers wait for',
    pod: pod({ initContainers: [sidecar] }),
    calls: ['Status', 'RunPodSandbox shop/web attempt=0', 'CreateContainer proxy attempt=0 in sb1', 'StartContainer c1'],
    events: ['Normal Created: Container created', 'Normal Started: Container started'],
    requeueAfterMs: 0,
  },
  {
    name: 'the sidecar runs: the app containers start, and no sync at once',
    pod: pod({ initContainers: [sidecar] }),
    given: (rt) => running(rt, sidecar),
    calls: ['CreateContainer a attempt=0 in sb1', 'StartContainer c2', 'CreateContainer b attempt=0 in sb1', 'StartContainer c3'],
    events: [
      'Normal Created: Container created',
      'Normal Started: Container started',
      'Normal Created: Container created',
      'Normal Started: Container started',
    ],
  },
  {
    name: 'all containers done (restartPolicy Never): the running sidecar is stopped with the pod grace period, the sandbox stays',
    pod: pod({ restartPolicy: 'Never', initContainers: [sidecar], containers: [a], terminationGracePeriodSeconds: 45 }),
    given: (rt) => {
      running(rt, sidecar);
      rt.addContainer('sb1', a, { id: 'c2', phase: 'exited', exitCode: 0 });
    },
    calls: ['StopContainer c1 timeout=45'],
    events: ['Normal Killing: Stopping container proxy'],
  },
  {
    name: 'killPod: app containers, then sidecars, stopped with the grace period, then the sandbox',
    pod: pod({ initContainers: [sidecar] }),
    given: (rt) => running(rt, sidecar, a, b),
    act: async (h, p) => {
      await h.syncer.killPod(p, await h.runtime.pod(UID), 20, 'deleted');
      return undefined;
    },
    calls: ['StopContainer c3 timeout=20', 'StopContainer c2 timeout=20', 'StopContainer c1 timeout=20', 'StopPodSandbox sb1'],
    events: ['Normal Killing: Stopping container b', 'Normal Killing: Stopping container a', 'Normal Killing: Stopping container proxy'],
    check: (h) => assert.ok(h.log.some((l) => l.msg === 'Killed pod' && l.fields?.reason === 'deleted' && l.fields?.gracePeriod === 20)),
  },
  {
    name: "killPod: sidecars' preStop hooks run at once, before any is signalled; then the later sidecar stops first",
    pod: pod({
      initContainers: [
        { ...sidecar, lifecycle: { preStop: { exec: { command: ['drain-1'] } } } },
        { ...sidecar, name: 'proxy-2', lifecycle: { preStop: { exec: { command: ['drain-2'] } } } },
      ],
      containers: [a],
    }),
    given: (rt) =>
      running(
        rt,
        { ...sidecar, lifecycle: { preStop: { exec: { command: ['drain-1'] } } } },
        { ...sidecar, name: 'proxy-2', lifecycle: { preStop: { exec: { command: ['drain-2'] } } } },
        a,
      ),
    act: async (h, p) => {
      await h.syncer.killPod(p, await h.runtime.pod(UID), 30, 'deleted');
      return undefined;
    },
    calls: [
      'ExecSync c2 ["drain-2"] timeout=0',
      'ExecSync c1 ["drain-1"] timeout=0',
      'StopContainer c3 timeout=30',
      'StopContainer c2 timeout=30',
      'StopContainer c1 timeout=30',
      'StopPodSandbox sb1',
    ],
    events: [
      'Normal Killing: Stopping container a',
      'Normal Killing: Stopping container proxy-2',
      'Normal Killing: Stopping container proxy',
    ],
  },
  {
    name: 'killPod: a preStop exec hook runs first, with no exec timeout (upstream waits for it at most the grace period), StopContainer gets what is left',
    pod: pod({ containers: [{ ...a, lifecycle: { preStop: { exec: { command: ['sh', '-c', 'drain'] } } } }] }),
    given: (rt) => running(rt, { ...a, lifecycle: { preStop: { exec: { command: ['sh', '-c', 'drain'] } } } }),
    act: async (h, p) => {
      await h.syncer.killPod(p, await h.runtime.pod(UID), 30, 'deleted');
      return undefined;
    },
    calls: ['ExecSync c1 ["sh","-c","drain"] timeout=0', 'StopContainer c1 timeout=30', 'StopPodSandbox sb1'],
    events: ['Normal Killing: Stopping container a'],
  },
  {
    name: 'a dead sandbox with no containers: removed, and a new sandbox with attempt+1 runs the pod',
    pod: pod({ containers: [a] }),
    given: (rt) => rt.addSandbox(UID, { id: 'sb7', ready: false }),
    calls: [
      'RemovePodSandbox sb7',
      'Status',
      'RunPodSandbox shop/web attempt=1',
      'CreateContainer a attempt=0 in sb1',
      'StartContainer c1',
    ],
    events: ['Normal Created: Container created', 'Normal Started: Container started'],
    check: (h) => assert.equal(h.runtime.sandbox('sb1')!.config!.metadata!.attempt, 1),
  },
  {
    name: 'a sandbox that lost its IP: its containers killed (2 s), it stopped, a new sandbox with attempt+1, the container again with attempt+1',
    pod: pod({ containers: [a] }),
    given: (rt) => {
      const sb = rt.addSandbox(UID, { id: 'sb7', ip: undefined });
      rt.addContainer(sb, a, { id: 'c9' });
    },
    calls: [
      'StopContainer c9 timeout=2',
      'StopPodSandbox sb7',
      'Status',
      'RunPodSandbox shop/web attempt=1',
      'CreateContainer a attempt=1 in sb1',
      'StartContainer c1',
    ],
    events: ['Normal Killing: Stopping container a', 'Normal Created: Container created', 'Normal Started: Container started'],
    check: (h) => assert.ok(h.log.some((l) => l.msg === 'Killed pod' && l.fields?.reason === 'pod sandbox changed')),
  },
  {
    name: 'CreateContainerConfigError: a missing ConfigMap',
    pod: pod({ containers: [{ ...a, env: [{ name: 'COLOR', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'color' } } }] }] }),
    with: { env: configMaps({}) },
    given: (rt) => rt.addSandbox(UID, { id: 'sb1' }),
    calls: [],
    events: ['Warning Failed: Error: configmap "cfg" not found'],
    waiting: { a: { reason: 'CreateContainerConfigError', message: 'configmap "cfg" not found' } },
    requeueAfterMs: 10_000,
    check: (h) => assert.ok(h.log.some((l) => l.msg === 'Cannot configure container' && l.fields?.err === 'configmap "cfg" not found')),
  },
  {
    name: 'CreateContainerConfigError: runAsNonRoot and an image that runs as root',
    pod: pod({ containers: [a], securityContext: { runAsNonRoot: true } }),
    with: { imageUsers: { 'busybox:1.36': { uid: 0 } } },
    given: (rt) => rt.addSandbox(UID, { id: 'sb1' }),
    calls: [],
    events: [`Warning Failed: Error: container has runAsNonRoot and image will run as root (pod: "web_shop(${UID})", container: a)`],
    waiting: {
      a: {
        reason: 'CreateContainerConfigError',
        message: `container has runAsNonRoot and image will run as root (pod: "web_shop(${UID})", container: a)`,
      },
    },
    requeueAfterMs: 10_000,
  },
  {
    name: 'volumes that cannot be attached on this node reject the pod (VolumeAttachmentLimitExceeded): no sandbox',
    pod: pod({ containers: [a] }),
    with: {
      volumes: {
        ...volumes(),
        setUp: async () => ({
          ready: false,
          failed: [],
          retryAfterMs: 8000,
          rejection: { reason: 'VolumeAttachmentLimitExceeded', message: 'Node has reached its volume attachment limit, rejecting pod.' },
        }),
      },
    },
    calls: [],
    events: [],
    check: (_h, r) =>
      assert.deepEqual(r?.rejected, {
        reason: 'VolumeAttachmentLimitExceeded',
        message: 'Node has reached its volume attachment limit, rejecting pod.',
      }),
  },
  {
    name: 'CreateContainerConfigError: a volume mount that cannot be made',
    pod: pod({ containers: [a] }),
    with: { volumes: volumes('cannot find volume "data" to mount into container "a"') },
    given: (rt) => rt.addSandbox(UID, { id: 'sb1' }),
    calls: [],
    events: ['Warning Failed: Error: cannot find volume "data" to mount into container "a"'],
    waiting: { a: { reason: 'CreateContainerConfigError', message: 'cannot find volume "data" to mount into container "a"' } },
    requeueAfterMs: 10_000,
    check: (h) =>
      assert.ok(
        h.log.some((l) => l.msg === 'Cannot configure container'),
        'logged as the other config errors',
      ),
  },
  {
    name: 'CreateContainerConfigError: recursiveReadOnly Enabled, and the runtime lists no handler that supports it',
    pod: pod({ containers: [{ ...a, volumeMounts: [{ name: 'mnt', mountPath: '/mnt', readOnly: true, recursiveReadOnly: 'Enabled' }] }] }),
    with: { volumes: volumeMounts },
    given: (rt) => rt.addSandbox(UID, { id: 'sb1' }),
    calls: ['Status'],
    events: [`Warning Failed: Error: ${RRO_UNSUPPORTED}`],
    waiting: { a: { reason: 'CreateContainerConfigError', message: RRO_UNSUPPORTED } },
    requeueAfterMs: 10_000,
  },
  {
    name: 'recursiveReadOnly IfPossible, and the runtime does not support it: a plain read-only mount',
    pod: pod({
      containers: [{ ...a, volumeMounts: [{ name: 'mnt', mountPath: '/mnt', readOnly: true, recursiveReadOnly: 'IfPossible' }] }],
    }),
    with: { volumes: volumeMounts },
    given: (rt) => rt.addSandbox(UID, { id: 'sb1' }),
    calls: ['Status', 'CreateContainer a attempt=0 in sb1', 'StartContainer c1'],
    events: ['Normal Created: Container created', 'Normal Started: Container started'],
    check: (h) => assert.deepEqual(createdMounts(h), [{ containerPath: '/mnt', hostPath: '/vol/mnt', readonly: true }]),
  },
  {
    name: "recursiveReadOnly Enabled, and the pod's RuntimeClass handler supports it: recursive_read_only on the CRI mount",
    pod: pod({
      runtimeClassName: 'rro',
      containers: [
        {
          ...a,
          volumeMounts: [
            { name: 'mnt', mountPath: '/mnt', readOnly: true, recursiveReadOnly: 'Enabled' },
            { name: 'mnt', mountPath: '/rw' },
          ],
        },
      ],
    }),
    with: { volumes: volumeMounts, runtimeHandler: async () => 'crun' },
    given: (rt) => {
      rt.addSandbox(UID, { id: 'sb1' });
      const status = rt.status.bind(rt);
      rt.status = async (r) => ({
        ...(await status(r)),
        runtimeHandlers: [
          { name: '', features: { recursiveReadOnlyMounts: false, userNamespaces: false } },
          { name: 'crun', features: { recursiveReadOnlyMounts: true, userNamespaces: false } },
        ],
      });
    },
    calls: ['Status', 'CreateContainer a attempt=0 in sb1', 'StartContainer c1'],
    events: ['Normal Created: Container created', 'Normal Started: Container started'],
    check: (h, r) => {
      assert.deepEqual(createdMounts(h), [
        { containerPath: '/mnt', hostPath: '/vol/mnt', readonly: true, recursiveReadOnly: true },
        { containerPath: '/rw', hostPath: '/vol/mnt', readonly: false },
      ]);
      assert.equal(r?.recursiveReadOnlyMounts, true, "for the status's volumeMounts");
    },
  },
  {
    name: 'an image that cannot be pulled: ErrImagePull, no container, retried in 1 s',
    pod: pod({ containers: [a] }),
    with: { pull: () => ({ waiting: { reason: 'ErrImagePull', message: 'not found' } }) },
    given: (rt) => rt.addSandbox(UID, { id: 'sb1' }),
    calls: [],
    events: ['Warning Failed: Error: ErrImagePull'],
    waiting: { a: { reason: 'ErrImagePull', message: 'not found' } },
    requeueAfterMs: 1000,
  },
  (() => {
    const p = pulls();
    return {
      name: "an image volume: pulled once for the sync before the containers' images; its mount carries the image and subPath, read-only",
      pod: withImageVolume([mountingTools, b]),
      with: { volumes: imageVolumeMounts, pull: p.pull },
      given: (rt) => rt.addSandbox(UID, { id: 'sb1' }),
      calls: ['CreateContainer a attempt=0 in sb1', 'StartContainer c1', 'CreateContainer b attempt=0 in sb1', 'StartContainer c2'],
      events: [
        'Normal Created: Container created',
        'Normal Started: Container started',
        'Normal Created: Container created',
        'Normal Started: Container started',
      ],
      check: (h) => {
        assert.deepEqual(p.asked, ['reg.example/tools:1', 'busybox:1.36', 'nginx:1.27']);
        assert.deepEqual(createdMounts(h), [
          {
            containerPath: '/tools',
            hostPath: '',
            image: { image: 'sha256:reg.example/tools:1', userSpecifiedImage: 'reg.example/tools:1', annotations: {} },
            imageSubPath: 'bin',
            readonly: true,
          },
        ]);
      },
    } satisfies Row;
  })(),
  (() => {
    const p = pulls({ 'reg.example/tools:1': { reason: 'ErrImagePull', message: 'manifest unknown' } });
    return {
      name: 'an image volume that cannot be pulled: the container mounting it waits in ErrImagePull (its image not pulled), the others start',
      pod: withImageVolume([mountingTools, b]),
      with: { volumes: imageVolumeMounts, pull: p.pull },
      given: (rt) => rt.addSandbox(UID, { id: 'sb1' }),
      calls: ['CreateContainer b attempt=0 in sb1', 'StartContainer c1'],
      events: ['Warning Failed: Error: ErrImagePull', 'Normal Created: Container created', 'Normal Started: Container started'],
      waiting: { a: { reason: 'ErrImagePull', message: 'manifest unknown' } },
      requeueAfterMs: 1000,
      check: () => assert.deepEqual(p.asked, ['reg.example/tools:1', 'nginx:1.27']),
    } satisfies Row;
  })(),
  (() => {
    const p = pulls();
    return {
      name: 'a running pod with an image volume: no pull (no event) while no container starts',
      pod: withImageVolume([mountingTools, b]),
      with: { volumes: imageVolumeMounts, pull: p.pull },
      given: (rt) => running(rt, mountingTools, b),
      calls: [],
      events: [],
      check: () => assert.deepEqual(p.asked, []),
    } satisfies Row;
  })(),
  {
    name: "RunPodSandbox fails: FailedCreatePodSandBox with grpc-go's words, no container, retried in 2 s",
    pod: pod(),
    given: (rt) =>
      rt.failNext(
        'runPodSandbox',
        new CriError('RunPodSandbox', status.UNKNOWN, 'failed to setup network for sandbox: plugin type="bridge" failed'),
      ),
    calls: ['Status', 'RunPodSandbox shop/web attempt=0'],
    events: [
      'Warning FailedCreatePodSandBox: Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox: plugin type="bridge" failed',
    ],
    requeueAfterMs: 2000,
  },
  {
    name: 'a RuntimeClass whose handler cannot be found: FailedCreatePodSandBox without RunPodSandbox',
    pod: pod({ runtimeClassName: 'gvisor' }),
    with: {
      runtimeHandler: async (n) => {
        throw new Error(`RuntimeClass "${n}" not found`);
      },
    },
    calls: ['Status'],
    events: ['Warning FailedCreatePodSandBox: Failed to create pod sandbox: RuntimeClass "gvisor" not found'],
    requeueAfterMs: 2000,
  },
  {
    name: 'the network is not ready: NetworkNotReady, no sandbox, retried in 1 s',
    pod: pod(),
    given: (rt) => {
      rt.network = { ready: false, reason: 'NetworkPluginNotReady', message: 'cni config uninitialized' };
    },
    calls: ['Status'],
    events: [
      'Warning NetworkNotReady: network is not ready: container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:cni config uninitialized',
    ],
    requeueAfterMs: 1000,
  },
  {
    name: 'a hostNetwork pod does not wait for the pod network',
    pod: pod({ hostNetwork: true, containers: [a] }),
    given: (rt) => {
      rt.network = { ready: false, reason: 'NetworkPluginNotReady', message: '' };
    },
    calls: ['RunPodSandbox shop/web attempt=0', 'CreateContainer a attempt=0 in sb1', 'StartContainer c1'],
    events: ['Normal Created: Container created', 'Normal Started: Container started'],
    check: (h) => assert.equal(h.runtime.sandbox('sb1')!.config!.hostname, ''),
  },
  {
    name: "CreateContainer fails: CreateContainerError with the runtime's status message alone, retried in 10 s",
    pod: pod({ containers: [a] }),
    given: (rt) => {
      rt.addSandbox(UID, { id: 'sb1' });
      rt.failNext('createContainer', new CriError('CreateContainer', status.NOT_FOUND, 'no such image'));
    },
    calls: ['CreateContainer a attempt=0 in sb1'],
    events: ['Warning Failed: Error: no such image'],
    waiting: { a: { reason: 'CreateContainerError', message: 'no such image' } },
    requeueAfterMs: 10_000,
  },
  {
    name: 'StartContainer fails: RunContainerError, retried in 10 s',
    pod: pod({ containers: [a] }),
    given: (rt) => {
      rt.addSandbox(UID, { id: 'sb1' });
      rt.failNext('startContainer', new CriError('StartContainer', status.UNKNOWN, 'exec: "sh": executable file not found'));
    },
    calls: ['CreateContainer a attempt=0 in sb1', 'StartContainer c1'],
    events: ['Normal Created: Container created', 'Warning Failed: Error: exec: "sh": executable file not found'],
    waiting: { a: { reason: 'RunContainerError', message: 'exec: "sh": executable file not found' } },
    requeueAfterMs: 10_000,
  },
  {
    name: "a postStart hook that fails: FailedPostStartHook without the hook's output, the container killed as any other (its preStop, the pod's grace period), PostStartHookError with the output",
    pod: pod({
      terminationGracePeriodSeconds: 20,
      containers: [{ ...a, lifecycle: { postStart: { exec: { command: ['false'] } }, preStop: { exec: { command: ['true'] } } } }],
    }),
    given: (rt) => {
      rt.addSandbox(UID, { id: 'sb1' });
      rt.execExitCode = 1;
    },
    calls: [
      'CreateContainer a attempt=0 in sb1',
      'StartContainer c1',
      'ExecSync c1 ["false"] timeout=20',
      'ExecSync c1 ["true"] timeout=0',
      'StopContainer c1 timeout=20',
    ],
    events: [
      'Normal Created: Container created',
      'Normal Started: Container started',
      'Warning FailedPostStartHook: PostStartHook failed',
      'Normal Killing: FailedPostStartHook',
      'Warning FailedPreStopHook: PreStopHook failed',
    ],
    waiting: {
      a: {
        reason: 'PostStartHookError',
        message:
          'Exec lifecycle hook ([false]) for Container "a" in Pod "web_shop(u1)" failed - error: command \'false\' exited with 1: failed, message: "failed"',
      },
    },
    requeueAfterMs: 10_000,
  },
  {
    name: 'a failed liveness probe: killed with the probe grace period and the probe message, started again',
    pod: pod({ containers: [{ ...a, livenessProbe: { exec: { command: ['true'] }, terminationGracePeriodSeconds: 5 } }] }),
    given: (rt) => running(rt, { ...a, livenessProbe: { exec: { command: ['true'] }, terminationGracePeriodSeconds: 5 } }),
    act: (h, p) => sync(h, p, (id) => (id === 'c1' ? { liveness: 'Failure' } : undefined)),
    calls: ['StopContainer c1 timeout=5', 'CreateContainer a attempt=1 in sb1', 'StartContainer c2'],
    events: [
      'Normal Killing: Container a failed liveness probe, will be restarted',
      'Normal Created: Container created',
      'Normal Started: Container started',
    ],
  },
  {
    name: 'removePod: every sandbox removed, a ready one stopped first, then the pod cgroup, logs and image back-offs',
    pod: pod(),
    given: (rt) => {
      rt.addSandbox(UID, { id: 'sb1', attempt: 0, ready: false });
      const sb = rt.addSandbox(UID, { id: 'sb2', attempt: 1 });
      rt.addContainer(sb, a, { id: 'c1' });
      rt.addSandbox('other', { id: 'sb3' });
    },
    act: async (h, p) => {
      await h.syncer.removePod(UID, p);
      return undefined;
    },
    calls: ['StopPodSandbox sb2', 'RemovePodSandbox sb2', 'RemovePodSandbox sb1'],
    events: [],
    check: async (h, _r) => {
      assert.deepEqual(await h.runtime.pod(UID), { uid: UID, sandboxes: [], containers: [] });
      assert.equal((await h.runtime.pod('other')).sandboxes.length, 1, 'another pod is left alone');
      assert.deepEqual(h.cgroups, [`remove /kubepods/besteffort/pod${UID}`]);
      assert.deepEqual(h.forgotten, [`${UID}/`]);
      assert.equal(existsSync(podLogDir(pod(), h.podLogsDir)), false);
    },
  },
  {
    name: 'releasePodCgroup: a terminated pod still in its source loses its cgroup, its sandbox left for removal',
    pod: pod(),
    given: (rt) => {
      rt.addSandbox(UID, { id: 'sb1', attempt: 0, ready: false });
    },
    act: async (h, p) => {
      await h.syncer.releasePodCgroup(p);
      return undefined;
    },
    calls: [],
    events: [],
    check: async (h, _r) => {
      assert.deepEqual(h.cgroups, [`remove /kubepods/besteffort/pod${UID}`]);
      assert.equal((await h.runtime.pod(UID)).sandboxes.length, 1);
    },
  },
  // cgroupsPerQOS false: upstream's podContainerManagerNoop (no pod cgroup; GetPodContainerName's "" as cgroup_parent).
  {
    name: 'cgroupsPerQOS false: no pod cgroup made, the sandbox with an empty cgroup parent',
    with: { node: { cgroups: cgroupLayout('cgroupfs', '/', false) } },
    pod: pod({ containers: [a] }),
    calls: ['Status', 'RunPodSandbox shop/web attempt=0', 'CreateContainer a attempt=0 in sb1', 'StartContainer c1'],
    events: ['Normal Created: Container created', 'Normal Started: Container started'],
    check: (h) => {
      assert.equal(h.runtime.sandbox('sb1')!.config!.linux?.cgroupParent, '');
      assert.deepEqual(h.cgroups, []);
    },
  },
  {
    name: 'cgroupsPerQOS false: a terminated or removed pod has no cgroup to remove',
    with: { node: { cgroups: cgroupLayout('systemd', '/', false) } },
    pod: pod(),
    given: (rt) => {
      rt.addSandbox(UID, { id: 'sb1', attempt: 0, ready: false });
    },
    act: async (h, p) => {
      await h.syncer.releasePodCgroup(p);
      await h.syncer.removePod(UID, p);
      return undefined;
    },
    calls: ['RemovePodSandbox sb1'],
    events: [],
    check: (h) => assert.deepEqual(h.cgroups, []),
  },
];

for (const row of rows) {
  test(`PodSyncer: ${row.name}`, async () => {
    const h = fakeSyncer(row.with);
    row.given?.(h.runtime);
    const r = await (row.act ?? ((x, p) => sync(x, p)))(h, row.pod);
    assert.deepEqual(h.runtime.trace(), row.calls, 'CRI calls');
    assert.deepEqual(h.events, row.events, 'events');
    if (r) {
      assert.deepEqual(Object.fromEntries(r.waiting), row.waiting ?? {}, 'waiting');
      const want = row.requeueAfterMs;
      if (Array.isArray(want))
        assert.ok(r.requeueAfterMs! > want[0] && r.requeueAfterMs! <= want[1], `requeue in ${want}, not ${r.requeueAfterMs}`);
      else assert.equal(r.requeueAfterMs, want, 'requeue');
    }
    await row.check?.(h, r);
  });
}

test('PodSyncer: a sync, a kill and a removal mark the pod changed, also when the sync fails, so that its next read lists again', async () => {
  const h = fakeSyncer();
  const aborted = new AbortController();
  aborted.abort(new Error('the pod is being terminated'));
  await assert.rejects(h.syncer.syncPod(pod(), aborted.signal));
  assert.deepEqual(h.runtime.changes, [UID], 'the sandbox was created before the sync stopped');
  await sync(h, pod());
  await h.syncer.killPod(pod(), await h.runtime.pod(UID), 2, 'deleted');
  await h.syncer.removePod(UID, pod());
  assert.deepEqual(h.runtime.changes, [UID, UID, UID, UID]);
});
