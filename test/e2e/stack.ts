// The real stack for end-to-end tests: brought up (or reused) by hack/up.sh, then
// used as an operator would, through the apiserver with @kubernetes/client-node and
// kubectl, and through containerd with crictl. If it cannot start, tests FAIL.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, CoordinationV1Api, KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { alive } from '../proc.ts';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const BIN = `${ROOT}/_output/bin`;
export const ADMIN_KUBECONFIG = `${ROOT}/_output/local/admin.kubeconfig`;
export const CLUSTER_CIDR = process.env.CLUSTER_CIDR ?? '10.88.0.0/16';
export const NODE_IP = process.env.KTS_IP ?? '172.30.255.10';
/** Where hack/ keeps its builds (hack/lib.sh KTS_CACHE). */
export const CACHE = process.env.KTS_CACHE ?? `${homedir()}/.cache/kubelet-ts`;
/** A version pinned in hack/versions.env. */
export function pinned(name: string): string {
  const v = new RegExp(`^${name}=(\\S+)`, 'm').exec(readFileSync(`${ROOT}/hack/versions.env`, 'utf8'))?.[1];
  if (!v) throw new Error(`hack/versions.env pins no ${name}`);
  return v;
}
export const BUSYBOX = 'docker.io/library/busybox:1.36';

/** The daemons hack/lib.sh's start_bg recorded in PIDS are alive (not zombies, as hack/lib.sh's `alive`). */
export function daemonsAlive(pids: string, names: string[]): boolean {
  return names.every((name) => {
    try {
      return alive(Number(readFileSync(`${pids}/${name}.pid`, 'utf8')));
    } catch {
      return false;
    }
  });
}

/** The newest modification time of a file under DIR (0 when DIR is missing). */
function newestUnder(dir: string): number {
  try {
    return Math.max(
      0,
      ...readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => statSync(`${e.parentPath}/${e.name}`).mtimeMs),
    );
  } catch {
    return 0;
  }
}

const LOCAL_PIDS = `${ROOT}/_output/local/pids`;
/**
 * What hack/up.sh would find with nothing to do: every daemon of the stack alive on the runtime
 * asked for, kubelet-ts started after dist/ was last built, and the Node Ready. Checked in a
 * fraction of a second, where up.sh's own checks take 13 s for each of the test files.
 */
function stackUp(): boolean {
  if (process.env.RUNTIME && process.env.RUNTIME !== RUNTIME) return false;
  if (
    !daemonsAlive(LOCAL_PIDS, [
      'containerd',
      'etcd',
      'kube-apiserver',
      'kube-controller-manager',
      'kube-scheduler',
      'registry',
      'kubelet-ts',
    ])
  )
    return false;
  if (newestUnder(`${ROOT}/dist`) > statSync(`${LOCAL_PIDS}/kubelet-ts.pid`).mtimeMs) return false;
  try {
    return kubectl('get', 'node', nodeName(), '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}') === 'True';
  } catch {
    return false;
  }
}

/**
 * Runs a script of hack/ and throws, failing the test, when it exits non-zero: "WHAT (hack/X
 * exited N)" with its last lines, or, when show lets its lines out as it goes, pointing at them.
 */
export function runHack(script: string, what: string, timeout: number, show = false, args: string[] = []): void {
  const out = show ? 'inherit' : 'pipe';
  const r = spawnSync('bash', [`${ROOT}/hack/${script}`, ...args], { encoding: 'utf8', stdio: ['ignore', out, out], timeout });
  if (r.status === 0) return;
  const lines = show ? ' see its lines above' : `\n${`${r.stdout}\n${r.stderr}`.trim().split('\n').slice(-15).join('\n')}`;
  throw new Error(`${what} (hack/${script} exited ${r.status ?? r.signal}):${lines}`);
}

let started = false;
/** Brings the stack up once per test process; throws (failing the test) with up.sh's reason. */
export function ensureStack(): void {
  if (started) return;
  if (stackUp()) {
    started = true;
    return;
  }
  runHack('up.sh', 'the real stack did not start', 45 * 60_000);
  started = true;
}

export function clients() {
  const kc = new KubeConfig();
  kc.loadFromFile(ADMIN_KUBECONFIG);
  return { core: kc.makeApiClient(CoreV1Api), coordination: kc.makeApiClient(CoordinationV1Api) };
}

export const nodeName = () => (process.env.NODE_NAME ?? execFileSync('hostname', { encoding: 'utf8' }).trim()).toLowerCase();

export function kubectl(...args: string[]): string {
  return execFileSync(`${BIN}/kubectl`, ['--kubeconfig', ADMIN_KUBECONFIG, ...args], { encoding: 'utf8', timeout: 120_000 });
}

/** kubectl with a manifest (or other input) on stdin. */
export function kubectlInput(input: string, ...args: string[]): string {
  return execFileSync(`${BIN}/kubectl`, ['--kubeconfig', ADMIN_KUBECONFIG, ...args], { input, encoding: 'utf8', timeout: 120_000 });
}

/** A series' value in a Prometheus text exposition (0 when absent). */
export function seriesValue(exposition: string, series: string): number {
  const line = exposition.split('\n').find((l) => l.startsWith(`${series} `));
  // The value, without the sample's timestamp (cAdvisor's series carry one).
  return line ? Number(line.slice(series.length + 1).split(' ')[0]) : 0;
}

export function crictl(...args: string[]): string {
  return execFileSync(`${BIN}/crictl`, ['--runtime-endpoint', 'unix:///run/containerd/containerd.sock', ...args], {
    encoding: 'utf8',
    timeout: 60_000,
  });
}

// What hack/containerd.sh started: the runtime (containerd2 or containerd1, RUNTIME of
// hack/lib.sh), its config, and a link to that runtime's own ctr.
const CONTAINERD_DIR = `${ROOT}/_output/local/containerd`;
export const CONTAINERD_CONFIG = `${CONTAINERD_DIR}/config.toml`;
export const RUNTIME = (() => {
  try {
    return readFileSync(`${CONTAINERD_DIR}/runtime`, 'utf8').trim();
  } catch {
    return 'containerd2';
  }
})();

/** ctr of the stack's runtime on its containerd, in the CRI plugin's namespace. */
export function ctr(...args: string[]): string {
  return execFileSync(`${CONTAINERD_DIR}/ctr`, ['--address', '/run/containerd/containerd.sock', '-n', 'k8s.io', ...args], {
    encoding: 'utf8',
    timeout: 60_000,
  });
}

/**
 * Restarts kubelet-ts (hack/kubelet.sh), with the KubeletConfiguration fields of the YAML
 * extraConfig added to the stack's own, and env in its environment (e.g.
 * DBUS_SYSTEM_BUS_ADDRESS). hack/kubelet.sh copies the fields into the configuration it writes
 * at the restart, so their file is gone when this returns; a restart without them goes back to
 * the stack's configuration.
 */
export function restartKubelet(extraConfig?: string, env: Record<string, string> = {}): void {
  const dir = extraConfig === undefined ? undefined : mkdtempSync(join(tmpdir(), 'kts-config-'));
  try {
    if (dir) writeFileSync(join(dir, 'config.yaml'), extraConfig!);
    const log = `${ROOT}/_output/local/logs/kubelet-ts.log`;
    const from = statSync(log, { throwIfNoEntry: false })?.size ?? 0;
    execFileSync('bash', [`${ROOT}/hack/kubelet.sh`, 'restart'], {
      stdio: 'ignore',
      timeout: 90_000,
      env: { ...process.env, ...(dir ? { KTS_CONFIG_EXTRA: join(dir, 'config.yaml') } : {}), ...env },
    });
    awaitListening(/enableServer:\s*false/.test(extraConfig ?? '') ? '127.0.0.1:10248' : `${NODE_IP}:10250`, log, from);
  } finally {
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Until the restarted kubelet accepts connections at HOSTPORT, or refuses its start (its
 * "kubelet-ts: error:" line in LOG after offset FROM, which the refusal tests look for). The
 * restart returns a second after the start, before the kubelet listens: a node proxy call at
 * once failed in CI.
 */
function awaitListening(hostPort: string, log: string, from: number): void {
  const [host, port] = hostPort.split(':');
  const end = Date.now() + 60_000;
  while (Date.now() < end) {
    if (spawnSync('bash', ['-c', `exec 3<>/dev/tcp/${host}/${port}`], { stdio: 'ignore' }).status === 0) return;
    if (readFileSync(log).subarray(from).includes('kubelet-ts: error:')) return;
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
  }
  throw new Error(`the restarted kubelet does not listen on ${hostPort} after 60 s (see ${log})`);
}

/**
 * Imports the stack's images again (hack/build-images.sh, as hack/up.sh does), after a test let
 * the kubelet remove unused ones. Not the conformance set: on a cold machine `make e2e` is still
 * building its binaries then, and hack/node-conformance.sh imports it itself.
 */
export function reimportImages(): void {
  runHack('build-images.sh', "the stack's images were not imported again", 300_000);
}

/**
 * Writes an image of the node's containerd to an OCI archive. When its content is gone (the
 * kubelet's image GC in an earlier test took it, or a pull through CRI kept only what it
 * unpacked), the stack's images are imported again first.
 */
export function exportImage(ref: string, file: string): void {
  const run = () => ctr('images', 'export', '--platform', 'linux/amd64', file, ref);
  try {
    run();
  } catch {
    reimportImages();
    run();
  }
}

/** A fresh namespace per test, deleted afterwards. */
export async function withNamespace<T>(fn: (ns: string) => Promise<T>): Promise<T> {
  const { core } = clients();
  const ns = `e2e-${randomBytes(3).toString('hex')}`;
  await core.createNamespace({ body: { metadata: { name: ns } } });
  // The namespace's default ServiceAccount must exist before pods can be created in it.
  await eventually(
    `ServiceAccount default in ${ns}`,
    30_000,
    async () => !!(await core.readNamespacedServiceAccount({ name: 'default', namespace: ns }).catch(() => undefined)),
  );
  try {
    return await fn(ns);
  } finally {
    await core.deleteNamespace({ name: ns }).catch(() => {});
  }
}

/** Polls until check returns a truthy value, or fails naming what it waited for and the last value seen. */
export async function eventually<T>(
  what: string,
  timeoutMs: number,
  check: () => Promise<T | undefined | false>,
  everyMs = 200,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  let lastErr: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v;
    } catch (e) {
      lastErr = e;
    }
    if (Date.now() > end)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastErr ? `: ${(lastErr as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** A pod's state in one line, for an error: phase, conditions not True, containers' waiting reasons. */
function podState(p: V1Pod): string {
  const st = p.status;
  const conds = (st?.conditions ?? [])
    .filter((c) => c.status !== 'True')
    .map((c) => `${c.type}=${c.status}${c.reason ? ` (${c.reason})` : ''}`);
  const waiting = [...(st?.initContainerStatuses ?? []), ...(st?.containerStatuses ?? [])]
    .filter((c) => c.state?.waiting)
    .map((c) => `${c.name} waiting ${c.state!.waiting!.reason ?? ''}${c.state!.waiting!.message ? `: ${c.state!.waiting!.message}` : ''}`);
  return [`phase ${st?.phase ?? 'unset'}`, ...conds, ...waiting].join('; ');
}

/** Waits for pod NAME to be Running (and to pass more, if given); a timeout says where the pod
 * stood and its last event, so that a failure in CI explains itself. */
export async function runningPod(ns: string, name: string, timeoutMs: number, more: (p: V1Pod) => boolean = () => true): Promise<V1Pod> {
  const { core } = clients();
  try {
    return await eventually(`pod ${name} Running`, timeoutMs, async () => {
      const p = await core.readNamespacedPod({ name, namespace: ns });
      if (p.status?.phase === 'Running' && more(p)) return p;
      throw new Error(podState(p));
    });
  } catch (e) {
    const events = await core.listNamespacedEvent({ namespace: ns, fieldSelector: `involvedObject.name=${name}` }).catch(() => undefined);
    const last = events?.items.at(-1);
    throw new Error(`${(e as Error).message}${last ? `; last event ${last.reason}: ${last.message}` : '; no events'}`);
  }
}

export function podSpec(name: string, over: Partial<V1Pod['spec']> = {}, image = BUSYBOX): V1Pod {
  return {
    metadata: { name },
    spec: { containers: [{ name: 'main', image, command: ['sleep', '3600'] }], terminationGracePeriodSeconds: 5, ...over } as V1Pod['spec'],
  };
}

/** Whether an IPv4 address lies inside a CIDR. */
export function inCIDR(ip: string, cidr: string): boolean {
  const toInt = (a: string) => a.split('.').reduce((n, o) => (n << 8) + Number(o), 0) >>> 0;
  const [net, bits] = cidr.split('/');
  const mask = bits === '0' ? 0 : (~0 << (32 - Number(bits))) >>> 0;
  return (toInt(ip) & mask) === (toInt(net!) & mask);
}

/**
 * Removes the directories of a kubelet a test started: its root dir is a mount of its own
 * (the kubelet bind-mounts it shared, as upstream's MakeRShared), so it is unmounted first.
 */
export function removeKubeletDir(dir: string): void {
  const mounts = execFileSync('findmnt', ['-rn', '-o', 'TARGET'], { encoding: 'utf8' })
    .split('\n')
    .filter((m) => m === dir || m.startsWith(`${dir}/`))
    .sort()
    .reverse();
  for (const m of mounts) spawnSync('umount', ['-l', m]);
  rmSync(dir, { recursive: true, force: true });
}

/**
 * Removes a Node a test's own kubelet registered, and its Lease: a kubelet stopped before its
 * first renewal after registering leaves a Lease without the Node as owner, which the garbage
 * collector would then never remove (upstream's kubelet does the same).
 */
export async function deleteTestNode(name: string): Promise<void> {
  const { core, coordination } = clients();
  await core.deleteNode({ name }).catch(() => {});
  await coordination.deleteNamespacedLease({ name, namespace: 'kube-node-lease' }).catch(() => {});
}

/** The stack kubelet's --root-dir (hack/lib.sh KUBELET_ROOT). */
export const KUBELET_ROOT_DIR = process.env.KUBELET_ROOT_DIR ?? '/var/lib/kubelet';

/** The runtime's ID of an image (what the kubelet keys its pulled-image records by). */
export function imageId(image: string): string {
  return (JSON.parse(crictl('inspecti', '-o', 'json', image)) as { status: { id: string } }).status.id;
}

/**
 * Forgets the kubelet's record of pulling an image ID (KEP-2535, <root-dir>/image_manager/pulled).
 * A test that pulls busybox's bytes from its private registry makes busybox's ID a kubelet-pulled
 * image: every later pod naming docker.io/library/busybox:1.36 that the record does not cover
 * would then pull it again (NeverVerifyPreloadedImages), from the stack's registry
 * (hack/registry.sh) at best. Removing the record makes the image preloaded again.
 */
export function forgetPulledImage(id: string): void {
  const file = join(KUBELET_ROOT_DIR, 'image_manager', 'pulled', `sha256-${createHash('sha256').update(id).digest('hex')}`);
  rmSync(file, { force: true });
}
