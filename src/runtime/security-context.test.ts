import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod, PodSecurityContext } from 'kubernetes-types/core/v1.js';
import {
  appArmorSecurity,
  containerSecurityContext,
  effectiveSecurityContext,
  namespaceOptions,
  normalizeSysctlName,
  sandboxSecurityContext,
  sandboxSysctls,
  seccompProfile,
  securityContextError,
  verifyRunAsNonRoot,
  type ImageUser,
} from './security-context.ts';
import { imageUser } from '../images/puller.ts';

const pod = (sc?: PodSecurityContext, c: Partial<Container> = {}, spec: Partial<NonNullable<Pod['spec']>> = {}): Pod => ({
  metadata: { name: 'web', namespace: 'shop', uid: 'u1' },
  spec: { containers: [{ name: 'main', image: 'busybox', ...c }], ...(sc ? { securityContext: sc } : {}), ...spec },
});
const main = (p: Pod) => p.spec!.containers[0]!;

test('effective security context: the container overrides the pod, field by field', () => {
  const p = pod({ runAsUser: 1, runAsGroup: 2, runAsNonRoot: true, fsGroup: 9 }, { securityContext: { runAsUser: 5, privileged: false } });
  assert.deepEqual(effectiveSecurityContext(p, main(p)), { runAsUser: 5, runAsGroup: 2, runAsNonRoot: true, privileged: false });
  assert.deepEqual(effectiveSecurityContext(pod(), main(pod())), {});
});

test('verifyRunAsNonRoot: upstream messages', () => {
  const where = '(pod: "web_shop(u1)", container: main)';
  const cases: [string, Pod, ImageUser, string | undefined][] = [
    ['not asked', pod(), { uid: 0 }, undefined],
    ['runAsNonRoot false', pod({ runAsNonRoot: false }), { uid: 0 }, undefined],
    ['image root', pod({ runAsNonRoot: true }), { uid: 0 }, `container has runAsNonRoot and image will run as root ${where}`],
    ['image without a user is root', pod({ runAsNonRoot: true }), {}, `container has runAsNonRoot and image will run as root ${where}`],
    ['image non-root', pod({ runAsNonRoot: true }), { uid: 1000 }, undefined],
    [
      'image user by name',
      pod({ runAsNonRoot: true }),
      { username: 'nginx' },
      `container has runAsNonRoot and image has non-numeric user (nginx), cannot verify user is non-root ${where}`,
    ],
    ['runAsUser 1000 wins over a root image', pod({ runAsNonRoot: true, runAsUser: 1000 }), { uid: 0 }, undefined],
    [
      'runAsUser 0',
      pod({}, { securityContext: { runAsNonRoot: true, runAsUser: 0 } }),
      { uid: 1000 },
      `container's runAsUser breaks non-root policy ${where}`,
    ],
    ['container turns it off', pod({ runAsNonRoot: true }, { securityContext: { runAsNonRoot: false } }), { uid: 0 }, undefined],
  ];
  for (const [name, p, user, want] of cases) assert.equal(verifyRunAsNonRoot(p, main(p), user), want, name);
});

test('seccomp: container, then pod, then seccompDefault; Localhost under the seccomp root', () => {
  const cases: [string, Pod, object, unknown][] = [
    ['unset: Unconfined', pod(), {}, { profileType: 'Unconfined' }],
    ['unset with seccompDefault', pod(), { seccompDefault: true }, { profileType: 'RuntimeDefault' }],
    ['pod RuntimeDefault', pod({ seccompProfile: { type: 'RuntimeDefault' } }), {}, { profileType: 'RuntimeDefault' }],
    [
      'container Unconfined over pod',
      pod({ seccompProfile: { type: 'RuntimeDefault' } }, { securityContext: { seccompProfile: { type: 'Unconfined' } } }),
      { seccompDefault: true },
      { profileType: 'Unconfined' },
    ],
    [
      'Localhost',
      pod({ seccompProfile: { type: 'Localhost', localhostProfile: 'profiles/audit.json' } }),
      {},
      { profileType: 'Localhost', localhostRef: '/var/lib/kubelet/seccomp/profiles/audit.json' },
    ],
    [
      'Localhost, other root',
      pod({ seccompProfile: { type: 'Localhost', localhostProfile: 'a.json' } }),
      { seccompProfileRoot: '/r/seccomp' },
      { profileType: 'Localhost', localhostRef: '/r/seccomp/a.json' },
    ],
    [
      'Localhost without a name',
      pod({ seccompProfile: { type: 'Localhost' } }),
      {},
      'localhostProfile must be set if seccompProfile type is Localhost.',
    ],
  ];
  for (const [name, p, opts, want] of cases) assert.deepEqual(seccompProfile(p, main(p), opts), want, name);
  const bad = pod({ seccompProfile: { type: 'Localhost' } });
  assert.equal(securityContextError(bad, main(bad)), 'localhostProfile must be set if seccompProfile type is Localhost.');
});

test('container security context: users, groups, capabilities, no_new_privs, paths', () => {
  const p = pod(
    { runAsUser: 1000, runAsGroup: 3000, fsGroup: 2000, supplementalGroups: [4000, 5000] },
    {
      securityContext: {
        capabilities: { add: ['NET_ADMIN'], drop: ['ALL'] },
        readOnlyRootFilesystem: true,
        allowPrivilegeEscalation: false,
      },
    },
  );
  const sc = containerSecurityContext(p, main(p), { uid: 0 });
  assert.deepEqual(sc.runAsUser, { value: 1000 }, 'runAsUser over the image user');
  assert.deepEqual(sc.runAsGroup, { value: 3000 });
  assert.deepEqual(sc.supplementalGroups, [2000, 4000, 5000], 'fsGroup first');
  assert.deepEqual(sc.capabilities, { addCapabilities: ['NET_ADMIN'], dropCapabilities: ['ALL'] });
  assert.equal(sc.readonlyRootfs, true);
  assert.equal(sc.noNewPrivs, true);
  assert.equal(sc.privileged, false);
  assert.deepEqual(sc.seccomp, { profileType: 'Unconfined' });
  assert.deepEqual(sc.namespaceOptions, { network: 'POD', pid: 'CONTAINER', ipc: 'POD' });
  assert.ok(sc.maskedPaths!.includes('/proc/kcore') && sc.readonlyPaths!.includes('/proc/sys'), 'default masked and read-only paths');
  const thermal = '/sys/devices/system/cpu/cpu0/thermal_throttle';
  const masked = containerSecurityContext(pod(), pod().spec!.containers[0]!, {}, { hostMaskedPaths: [thermal] }).maskedPaths!;
  assert.deepEqual(
    [masked[1], masked[2], masked.at(-1)],
    ['/proc/acpi', '/proc/interrupts', thermal],
    "upstream's order, then the host's thermal_throttle dirs",
  );

  const cases: [string, Pod, ImageUser, (s: ReturnType<typeof containerSecurityContext>) => unknown, unknown][] = [
    ['image uid when no runAsUser', pod(), { uid: 101 }, (s) => [s.runAsUser, s.runAsUsername], [{ value: 101 }, undefined]],
    ['image user name', pod(), { username: 'nginx' }, (s) => [s.runAsUser, s.runAsUsername], [undefined, 'nginx']],
    ['allowPrivilegeEscalation unset: no no_new_privs', pod(), {}, (s) => s.noNewPrivs, false],
    ['allowPrivilegeEscalation true', pod({}, { securityContext: { allowPrivilegeEscalation: true } }), {}, (s) => s.noNewPrivs, false],
    [
      'privileged implies escalation',
      pod({}, { securityContext: { allowPrivilegeEscalation: false, privileged: true } }),
      {},
      (s) => [s.noNewPrivs, s.privileged],
      [false, true],
    ],
    [
      'CAP_SYS_ADMIN implies escalation',
      pod({}, { securityContext: { allowPrivilegeEscalation: false, capabilities: { add: ['CAP_SYS_ADMIN'] } } }),
      {},
      (s) => s.noNewPrivs,
      false,
    ],
    ['procMount Unmasked', pod({}, { securityContext: { procMount: 'Unmasked' } }), {}, (s) => [s.maskedPaths, s.readonlyPaths], [[], []]],
    ['no capabilities: left to the runtime', pod(), {}, (s) => s.capabilities, undefined],
    [
      'shareProcessNamespace',
      pod({}, {}, { shareProcessNamespace: true }),
      {},
      (s) => s.namespaceOptions,
      { network: 'POD', pid: 'POD', ipc: 'POD' },
    ],
    [
      'host namespaces',
      pod({}, {}, { hostPID: true, hostIPC: true, hostNetwork: true }),
      {},
      (s) => s.namespaceOptions,
      { network: 'NODE', pid: 'NODE', ipc: 'NODE' },
    ],
    [
      'seLinuxOptions',
      pod({ seLinuxOptions: { level: 's0:c1' } }),
      {},
      (s) => s.selinuxOptions,
      { user: '', role: '', type: '', level: 's0:c1' },
    ],
  ];
  for (const [name, q, user, get, want] of cases) assert.deepEqual(get(containerSecurityContext(q, main(q), user)), want, name);
});

test('sandbox security context and sysctls', () => {
  const p = pod(
    {
      runAsUser: 1000,
      runAsGroup: 3000,
      fsGroup: 2000,
      supplementalGroups: [4000],
      sysctls: [
        { name: 'net/ipv4/ip_local_port_range', value: '1024 65535' },
        { name: 'kernel.shm_rmid_forced', value: '1' },
      ],
    },
    {},
    { hostPID: true, initContainers: [{ name: 'init', securityContext: { privileged: true } }] },
  );
  assert.deepEqual(sandboxSecurityContext(p), {
    namespaceOptions: { network: 'POD', pid: 'NODE', ipc: 'POD' },
    privileged: true,
    seccomp: { profileType: 'RuntimeDefault' },
    runAsUser: { value: 1000 },
    runAsGroup: { value: 3000 },
    supplementalGroups: [2000, 4000],
  });
  assert.deepEqual(sandboxSysctls(p), { 'net.ipv4.ip_local_port_range': '1024 65535', 'kernel.shm_rmid_forced': '1' });
  assert.deepEqual(namespaceOptions(pod()), { network: 'POD', pid: 'CONTAINER', ipc: 'POD' });
});

test('sysctl names: slashes become dots, dots in a slash-separated name become slashes', () => {
  const cases: [string, string][] = [
    ['kernel.shm_rmid_forced', 'kernel.shm_rmid_forced'],
    ['net/ipv4/ip_local_port_range', 'net.ipv4.ip_local_port_range'],
    ['net/ipv4/conf/eno2.100/rp_filter', 'net.ipv4.conf.eno2/100.rp_filter'],
    ['net.ipv4.conf.eno2/100.rp_filter', 'net.ipv4.conf.eno2/100.rp_filter'],
    ['kernel', 'kernel'],
  ];
  for (const [name, want] of cases) assert.equal(normalizeSysctlName(name), want, name);
});

test('the image user from CRI ImageStatus, as upstream getImageUser', () => {
  assert.deepEqual(imageUser({ uid: { value: '1000' }, username: '' }), { uid: 1000 });
  assert.deepEqual(imageUser({ uid: null, username: 'nginx' }), { username: 'nginx' });
  assert.deepEqual(imageUser({ uid: null, username: '' }), { uid: 0 }, 'no user: root');
  assert.deepEqual(imageUser(null), { uid: 0 });
});

test("AppArmor: the container's field, its deprecated annotation, the pod's field, to the runtime with the old string beside it", () => {
  const withAnnotation = (v: string): Pod => ({
    ...pod(),
    metadata: { ...pod().metadata, annotations: { 'container.apparmor.security.beta.kubernetes.io/main': v } },
  });
  const rows: [string, Pod, ReturnType<typeof appArmorSecurity>][] = [
    ['none asked for: none sent', pod(), {}],
    [
      'the pod says RuntimeDefault',
      pod({ appArmorProfile: { type: 'RuntimeDefault' } }),
      { apparmor: { profileType: 'RuntimeDefault' }, apparmorProfile: 'runtime/default' },
    ],
    [
      'the container says Unconfined over the pod',
      pod({ appArmorProfile: { type: 'RuntimeDefault' } }, { securityContext: { appArmorProfile: { type: 'Unconfined' } } }),
      { apparmor: { profileType: 'Unconfined' }, apparmorProfile: 'unconfined' },
    ],
    [
      'a Localhost profile by name',
      pod(undefined, { securityContext: { appArmorProfile: { type: 'Localhost', localhostProfile: 'k8s-deny-write' } } }),
      { apparmor: { profileType: 'Localhost', localhostRef: 'k8s-deny-write' }, apparmorProfile: 'localhost/k8s-deny-write' },
    ],
    [
      'the deprecated annotation',
      withAnnotation('localhost/k8s-deny-write'),
      { apparmor: { profileType: 'Localhost', localhostRef: 'k8s-deny-write' }, apparmorProfile: 'localhost/k8s-deny-write' },
    ],
  ];
  for (const [name, p, want] of rows) {
    assert.deepEqual(appArmorSecurity(p, main(p)), want, name);
    const sc = containerSecurityContext(p, main(p));
    assert.deepEqual([sc.apparmor, sc.apparmorProfile], [want.apparmor, want.apparmorProfile], `${name}: in the container's context`);
  }
});
