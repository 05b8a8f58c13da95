// Garbage collection and housekeeping as a user sees them: dead containers do not pile
// up (but the last one stays for lastState and `kubectl logs --previous`), a pod deleted
// while the kubelet was down is cleaned up once it is back, and CRI objects this kubelet
// did not create (another kubelet on the same containerd) are never touched.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BUSYBOX,
  ROOT,
  clients,
  crictl,
  ensureStack,
  eventually,
  kubectl,
  nodeName,
  podSpec,
  seriesValue,
  withNamespace,
} from './stack.ts';

before(() => ensureStack());

const ids = (...args: string[]) =>
  crictl(...args)
    .trim()
    .split('\n')
    .filter(Boolean);
const containersOf = (uid: string) => ids('ps', '-a', '-q', '--label', `io.kubernetes.pod.uid=${uid}`);
const sandboxesOf = (uid: string) => ids('pods', '-q', '--label', `io.kubernetes.pod.uid=${uid}`);
/** The attempts of a pod's containers, from one listing: an ID listed first and inspected
 * later may be gone by then, since GC keeps removing a crash-looping container's old instances. */
const attemptsOf = (uid: string) =>
  (
    JSON.parse(crictl('ps', '-a', '-o', 'json', '--label', `io.kubernetes.pod.uid=${uid}`)) as {
      containers: { metadata: { attempt?: number } }[];
    }
  ).containers.map((c) => c.metadata.attempt ?? 0);

/**
 * A pod as another kubelet on this containerd would leave it: a stopped sandbox and two
 * dead instances of one container, with the pod labels but no pod dir under our root.
 */
function foreignPod(): { uid: string; remove(): void } {
  const uid = randomUUID();
  const dir = mkdtempSync(join(tmpdir(), 'kts-gc-'));
  const labels = { 'io.kubernetes.pod.name': 'foreign', 'io.kubernetes.pod.namespace': 'elsewhere', 'io.kubernetes.pod.uid': uid };
  const logDir = `/var/log/pods/elsewhere_foreign_${uid}`;
  mkdirSync(logDir, { recursive: true });
  writeFileSync(
    join(dir, 'pod.json'),
    JSON.stringify({
      metadata: { name: 'foreign', namespace: 'elsewhere', uid, attempt: 0 },
      labels,
      log_directory: logDir,
      linux: { security_context: { namespace_options: { network: 2 } } },
    }),
  );
  const sandbox = crictl('runp', join(dir, 'pod.json')).trim();
  for (const attempt of [0, 1]) {
    writeFileSync(
      join(dir, `c${attempt}.json`),
      JSON.stringify({
        metadata: { name: 'main', attempt },
        image: { image: BUSYBOX },
        command: ['true'],
        log_path: `main/${attempt}.log`,
        labels: { ...labels, 'io.kubernetes.container.name': 'main' },
      }),
    );
    crictl('start', crictl('create', '--no-pull', sandbox, join(dir, `c${attempt}.json`), join(dir, 'pod.json')).trim());
  }
  crictl('stopp', sandbox);
  return {
    uid,
    remove() {
      try {
        crictl('rmp', '-f', sandbox);
      } catch {
        /* already gone */
      }
      rmSync(logDir, { recursive: true, force: true });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

test("a crash-looping container keeps only its newest dead instance; another kubelet's pod is left alone", () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    const foreign = foreignPod();
    try {
      await core.createNamespacedPod({
        namespace: ns,
        body: podSpec('crasher', {
          containers: [{ name: 'main', image: BUSYBOX, command: ['sh', '-c', 'echo run at $(date +%s); exit 1'] }],
        }),
      });
      const read = () => core.readNamespacedPod({ name: 'crasher', namespace: ns });
      const uid = (await read()).metadata!.uid!;
      // An immediate first restart, then 10 s of back-off: attempts 0, 1 and 2 exist within ~15 s.
      await eventually('three restarts', 60_000, async () => ((await read()).status?.containerStatuses?.[0]?.restartCount ?? 0) >= 3, 500);
      // Container GC runs every minute; only it removes a live pod's containers.
      const attempts = await eventually(
        'at most 2 instances of the container in containerd',
        80_000,
        async () => {
          const a = attemptsOf(uid);
          return a.length <= 2 ? a.sort((x, y) => y - x) : undefined;
        },
        1000,
      );
      assert.ok(
        attempts.length >= 1 && attempts[0]! - attempts.at(-1)! <= 1,
        `the newest instances are kept: attempts ${attempts.join(',')}`,
      );
      // What the newest dead instance is kept for.
      await eventually(
        'lastState terminated',
        30_000,
        async () => !!(await read()).status?.containerStatuses?.[0]?.lastState?.terminated,
        500,
      );
      assert.match(kubectl('logs', '-n', ns, 'crasher', '--previous'), /^run at \d+\n$/);
      assert.equal(sandboxesOf(uid).length, 1, 'the live pod keeps its sandbox');

      // The GC pass that removed the crasher's instances did not touch the foreign pod.
      assert.equal(containersOf(foreign.uid).length, 2, "the foreign pod's dead containers are still there");
      assert.equal(sandboxesOf(foreign.uid).length, 1, "the foreign pod's stopped sandbox is still there");
    } finally {
      foreign.remove();
    }
  }));

const KUBELET_LOG = `${ROOT}/_output/local/logs/kubelet-ts.log`;
const kubeletSh = (cmd: 'start' | 'stop') => execFileSync('bash', [`${ROOT}/hack/kubelet.sh`, cmd], { stdio: 'ignore', timeout: 60_000 });

test('a pod deleted while the kubelet was down is killed and removed once it is back, with its dirs; its preStop hook runs first', () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    // Its preStop hook leaves a mark on the host (upstream reads the hook back from the container's
    // annotations, restoreSpecsFromContainerLabels); a subPath's bind mount must go too.
    const marks = mkdtempSync(join(tmpdir(), 'kts-prestop-'));
    await core.createNamespacedPod({
      namespace: ns,
      body: podSpec('forgotten', {
        volumes: [
          { name: 'mark', hostPath: { path: marks } },
          { name: 'scratch', emptyDir: {} },
        ],
        containers: [
          {
            name: 'main',
            image: BUSYBOX,
            command: ['sleep', '3600'],
            lifecycle: { preStop: { exec: { command: ['sh', '-c', 'echo drained > /mark/prestop'] } } },
            volumeMounts: [
              { name: 'mark', mountPath: '/mark' },
              { name: 'scratch', mountPath: '/sub', subPath: 'x' },
            ],
          },
        ],
      }),
    });
    const pod = await eventually('pod Running', 30_000, async () => {
      const p = await core.readNamespacedPod({ name: 'forgotten', namespace: ns });
      return p.status?.phase === 'Running' ? p : undefined;
    });
    const uid = pod.metadata!.uid!;
    const logDir = `/var/log/pods/${ns}_forgotten_${uid}`;
    const podDir = `/var/lib/kubelet/pods/${uid}`;
    assert.ok(existsSync(logDir), `${logDir} exists`);
    assert.ok(existsSync(podDir), `${podDir} exists`);

    kubeletSh('stop');
    let logFrom = 0;
    // A CSI volume its vol_data.json is gone from, mounted: it cannot be reconstructed, and is force cleaned.
    const lost = `${podDir}/volumes/kubernetes.io~csi/pvc-lost/mount`;
    mkdirSync(lost, { recursive: true });
    execFileSync('mount', ['-t', 'tmpfs', 'tmpfs', lost]);
    try {
      kubectl('delete', 'pod', 'forgotten', '-n', ns, '--grace-period=0', '--force', '--wait=false');
      await eventually(
        'pod gone from the apiserver',
        20_000,
        async () => !(await core.readNamespacedPod({ name: 'forgotten', namespace: ns }).catch(() => undefined)),
      );
      assert.notEqual(
        ids('ps', '-q', '--label', `io.kubernetes.pod.uid=${uid}`).length,
        0,
        'its container still runs: no kubelet stopped it',
      );
    } finally {
      logFrom = statSync(KUBELET_LOG).size;
      kubeletSh('start');
    }
    await eventually(
      'no container and no sandbox of the pod left',
      30_000,
      async () => containersOf(uid).length === 0 && sandboxesOf(uid).length === 0,
      500,
    );
    await eventually('its log dir and pod dir removed', 15_000, async () => !existsSync(logDir) && !existsSync(podDir), 500);
    // upstream's volume reconstruction at start: every volume directory counted (kube-api-access,
    // scratch, pvc-lost, and the other pods'), pvc-lost failed and force cleaned once its pod was found gone.
    const metrics = kubectl('get', '--raw', `/api/v1/nodes/${nodeName()}/proxy/metrics`);
    assert.ok(seriesValue(metrics, 'reconstruct_volume_operations_total') >= 3, 'reconstruct_volume_operations_total');
    assert.ok(seriesValue(metrics, 'reconstruct_volume_operations_errors_total') >= 1, 'reconstruct_volume_operations_errors_total');
    assert.ok(seriesValue(metrics, 'force_cleaned_failed_volume_operations_total') >= 1, 'force_cleaned_failed_volume_operations_total');
    assert.equal(seriesValue(metrics, 'force_cleaned_failed_volume_operation_errors_total'), 0);
    assert.match(
      readFileSync(KUBELET_LOG).subarray(logFrom).toString(),
      new RegExp(`Could not construct volume information.*${uid}.*pvc-lost.*failed loading volume data`),
    );
    assert.equal(readFileSync(join(marks, 'prestop'), 'utf8'), 'drained\n', 'the preStop hook ran before the stop');
    rmSync(marks, { recursive: true, force: true });
    // As upstream's killContainer for a pod it only knows from the container's labels: a Killing
    // event on the deleted pod, naming the container as one the pod does not list.
    const killing = await eventually('a Killing event for the orphan', 15_000, async () => {
      const events = await core.listNamespacedEvent({ namespace: ns, fieldSelector: `involvedObject.uid=${uid}` });
      return events.items.find((e) => e.reason === 'Killing');
    });
    assert.equal(killing.message, 'Stopping container main');
    assert.equal(killing.involvedObject.fieldPath, 'implicitly required container main');
    await eventually(
      'node Ready again',
      40_000,
      async () => (await core.readNode({ name: nodeName() })).status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True',
      500,
    );
  }));
