// Container log files as a node's log shippers and `kubectl logs` see them: the
// /var/log/containers/POD_NS_CONTAINER-ID.log symlink to the CRI log, removed with the
// pod, and rotation at containerLogMaxSize (LOG.YYYYMMDD-HHMMSS, older ones gzipped)
// with `kubectl logs` still answering from the fresh file.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { parseQuantity } from '../../src/resources/quantity.ts';
import { parseDuration } from '../../src/apiserver/duration.ts';
import { BUSYBOX, clients, ensureStack, eventually, kubectl, nodeName, podSpec, withNamespace } from './stack.ts';

before(() => ensureStack());

const containerID = (s: string | undefined) => s?.replace(/^[a-z]+:\/\//, '');

/** The kubelet's effective configuration, as /configz serves it through the node proxy. */
function effectiveConfig(): Record<string, unknown> {
  return (JSON.parse(kubectl('get', '--raw', `/api/v1/nodes/${nodeName()}/proxy/configz`)) as { kubeletconfig: Record<string, unknown> })
    .kubeletconfig;
}

test('a running container has its /var/log/containers symlink to its log, removed with the pod', () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    await core.createNamespacedPod({
      namespace: ns,
      body: podSpec('linked', {
        containers: [{ name: 'main', image: BUSYBOX, command: ['sh', '-c', 'echo hello-from-linked; sleep 3600'] }],
      }),
    });
    const pod = await eventually('the container running', 60_000, async () => {
      const p = await core.readNamespacedPod({ name: 'linked', namespace: ns });
      return p.status?.containerStatuses?.[0]?.state?.running ? p : undefined;
    });
    const id = containerID(pod.status!.containerStatuses![0]!.containerID)!;
    const link = `/var/log/containers/linked_${ns}_main-${id}.log`;
    const target = `/var/log/pods/${ns}_linked_${pod.metadata!.uid}/main/0.log`;
    assert.ok(lstatSync(link).isSymbolicLink(), `${link} is a symlink`);
    assert.equal(readlinkSync(link), target);
    await eventually('the log read through the symlink', 10_000, async () => readFileSync(link, 'utf8').includes('hello-from-linked'));

    await core.deleteNamespacedPod({ name: 'linked', namespace: ns });
    await eventually(
      `${link} removed with the pod`,
      90_000,
      async () => {
        try {
          lstatSync(link);
          return false;
        } catch {
          return true;
        }
      },
      500,
    );
  }));

test('a container writing past containerLogMaxSize has its log rotated, and kubectl logs still answers', () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    const config = effectiveConfig();
    // The stack's KubeletConfiguration sets none of these: upstream's defaults apply.
    const maxSize = parseQuantity(String(config.containerLogMaxSize ?? '10Mi'))!;
    const intervalMs = parseDuration(String(config.containerLogMonitorInterval ?? '10s'))!;
    assert.ok(maxSize > 0 && maxSize <= 64 * 2 ** 20, `containerLogMaxSize ${maxSize} bytes is small enough to fill in a test`);
    // Lines of 200 bytes keep the CRI prefix (timestamp, stream, tag) a small share; then one
    // line a second, so the fresh file has something for `kubectl logs --tail 1`.
    const bytes = maxSize + 2 * 2 ** 20;
    const script = `yes "$(printf '%0199d' 0)" | head -c ${bytes}; while true; do echo tick-$(date +%s); sleep 1; done`;
    await core.createNamespacedPod({
      namespace: ns,
      body: podSpec('chatty', { containers: [{ name: 'main', image: BUSYBOX, command: ['sh', '-c', script] }] }),
    });
    const pod = await eventually('the container running', 60_000, async () => {
      const p = await core.readNamespacedPod({ name: 'chatty', namespace: ns });
      return p.status?.containerStatuses?.[0]?.state?.running ? p : undefined;
    });
    const dir = `/var/log/pods/${ns}_chatty_${pod.metadata!.uid}/main`;
    const rotated = await eventually(
      `a rotated 0.log.<timestamp> in ${dir}`,
      3 * intervalMs + 15_000,
      async () => {
        const names = readdirSync(dir).filter((n) => /^0\.log\.\d{8}-\d{6}(\.gz)?$/.test(n));
        return names.length ? names : undefined;
      },
      500,
    );
    assert.ok(
      rotated.every((n) => n.endsWith('.gz') || statSync(`${dir}/${n}`).size >= maxSize),
      `rotated files hold the full log: ${rotated}`,
    );
    // Between the rename and ReopenContainerLog there is briefly no 0.log.
    const size = await eventually(
      'a fresh 0.log from the runtime',
      10_000,
      async () => existsSync(`${dir}/0.log`) && { bytes: statSync(`${dir}/0.log`).size },
    );
    assert.ok(size.bytes < maxSize, `0.log is ${size.bytes} bytes after rotation, under ${maxSize}`);
    // The symlink still names the current file.
    const id = containerID(pod.status!.containerStatuses![0]!.containerID)!;
    assert.equal(readlinkSync(`/var/log/containers/chatty_${ns}_main-${id}.log`), `${dir}/0.log`);

    const last = await eventually(
      'kubectl logs --tail 1 from the fresh file',
      15_000,
      async () => {
        const out = kubectl('logs', '-n', ns, 'chatty', '--tail', '1').trim();
        return /^tick-\d+$/.test(out) ? out : undefined;
      },
      1000,
    );
    assert.match(last, /^tick-\d+$/);
    const metrics = kubectl('get', '--raw', `/api/v1/nodes/${nodeName()}/proxy/metrics`);
    assert.match(metrics, /kubelet_ts_container_log_rotations_total\{result="rotated"\} [1-9]/);
  }));
