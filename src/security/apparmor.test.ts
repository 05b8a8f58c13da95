import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Container, Pod, PodSecurityContext } from 'kubernetes-types/core/v1.js';
import { admitAppArmor, appArmorHostError, appArmorProfile, appArmorRequired, validateAppArmor } from './apparmor.ts';

const NO_APPARMOR = 'AppArmor is not enabled on the host';
const test1: Container = { name: 'test', image: 'busybox', command: ['touch', 'foo'] };

function pod(
  o: { annotations?: Record<string, string>; c?: Partial<Container>; podSC?: PodSecurityContext; init?: Container[]; phase?: string } = {},
): Pod {
  return {
    metadata: { name: 'p', namespace: 'ns', uid: 'u', ...(o.annotations ? { annotations: o.annotations } : {}) },
    spec: {
      containers: [{ ...test1, ...o.c }],
      ...(o.init ? { initContainers: o.init } : {}),
      ...(o.podSC ? { securityContext: o.podSC } : {}),
    },
    status: o.phase === undefined ? { phase: 'Pending' } : o.phase === '' ? {} : { phase: o.phase },
  };
}
const annotated = (v: string, container = 'test') =>
  pod({ annotations: { [`container.apparmor.security.beta.kubernetes.io/${container}`]: v } });
const field = (type: string, localhostProfile?: string) =>
  pod({ c: { securityContext: { appArmorProfile: { type, ...(localhostProfile !== undefined ? { localhostProfile } : {}) } } } });

test('appArmorHostError: securityfs and the module parameter "Y" (upstream IsEnabled)', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'apparmor-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const files = { securityfs: join(dir, 'securityfs'), enabled: join(dir, 'enabled') };
  assert.equal(appArmorHostError(files), NO_APPARMOR, 'neither');
  writeFileSync(files.enabled, 'Y\n');
  assert.equal(appArmorHostError(files), NO_APPARMOR, 'no securityfs');
  mkdirSync(files.securityfs);
  assert.equal(appArmorHostError(files), undefined, 'both');
  writeFileSync(files.enabled, 'N\n');
  assert.equal(appArmorHostError(files), NO_APPARMOR, 'module disabled');
  writeFileSync(files.enabled, 'Y');
  assert.equal(appArmorHostError(files), NO_APPARMOR, 'upstream wants more than one byte');
});

const requiredRows: [string, Pod, boolean][] = [
  ['nothing asked', pod(), false],
  ['container field RuntimeDefault', field('RuntimeDefault'), true],
  ['container field Localhost', field('Localhost', 'p1'), true],
  ['container field Unconfined', field('Unconfined'), false],
  ['pod field RuntimeDefault', pod({ podSC: { appArmorProfile: { type: 'RuntimeDefault' } } }), true],
  ['pod field Unconfined', pod({ podSC: { appArmorProfile: { type: 'Unconfined' } } }), false],
  ['init container field', pod({ init: [{ name: 'i', securityContext: { appArmorProfile: { type: 'RuntimeDefault' } } }] }), true],
  ['annotation runtime/default', annotated('runtime/default'), true],
  ['annotation localhost/p1', annotated('localhost/p1'), true],
  ['annotation unconfined', annotated('unconfined'), false],
  ['annotation of another container still counts (upstream)', annotated('runtime/default', 'other'), true],
  ['an unrelated annotation', pod({ annotations: { 'example.com/x': 'runtime/default' } }), false],
];
for (const [name, p, want] of requiredRows) test(`appArmorRequired: ${name}`, () => assert.equal(appArmorRequired(p), want));

test('appArmorProfile: container field, then annotation, then pod field (upstream GetProfile)', () => {
  const both = pod({
    annotations: { 'container.apparmor.security.beta.kubernetes.io/test': 'localhost/from-annotation' },
    podSC: { appArmorProfile: { type: 'RuntimeDefault' } },
  });
  const c = both.spec!.containers[0]!;
  assert.deepEqual(appArmorProfile(both, c), { type: 'Localhost', localhostProfile: 'from-annotation' });
  assert.deepEqual(appArmorProfile(both, { ...c, securityContext: { appArmorProfile: { type: 'Unconfined' } } }), { type: 'Unconfined' });
  assert.deepEqual(appArmorProfile(both, { ...c, name: 'other' }), { type: 'RuntimeDefault' });
  assert.equal(appArmorProfile(annotated('bogus'), c), undefined, 'an invalid annotation value is no profile');
});

test('validateAppArmor: the host error only for pods that need AppArmor; empty Localhost names on a host with it', () => {
  assert.equal(validateAppArmor(field('RuntimeDefault'), NO_APPARMOR), NO_APPARMOR);
  assert.equal(validateAppArmor(field('Unconfined'), NO_APPARMOR), undefined);
  assert.equal(validateAppArmor(field('RuntimeDefault'), undefined), undefined);
  assert.equal(validateAppArmor(field('Localhost', 'p1'), undefined), undefined);
  assert.equal(validateAppArmor(field('Localhost', '  '), undefined), 'invalid empty AppArmor profile name: &{"Localhost" "  "}');
  assert.equal(validateAppArmor(field('Localhost'), undefined), 'invalid empty AppArmor profile name: &{"Localhost" <nil>}');
  assert.match(validateAppArmor(annotated('localhost/'), undefined) ?? '', /invalid empty AppArmor profile name/);
});

// The two node e2e tests "AppArmor when running without AppArmor" (test/e2e_node/apparmor_test.go):
// phase Failed, reason AppArmor, a message that says AppArmor.
const admitRows: [string, Pod, string | undefined, ReturnType<typeof admitAppArmor>][] = [
  [
    'e2e: a profile in the annotation, host without AppArmor',
    annotated('runtime/default'),
    NO_APPARMOR,
    { admit: false, reason: 'AppArmor', message: 'Pod was rejected: Cannot enforce AppArmor: AppArmor is not enabled on the host' },
  ],
  [
    'e2e: a profile in the field, host without AppArmor',
    field('RuntimeDefault'),
    NO_APPARMOR,
    { admit: false, reason: 'AppArmor', message: 'Pod was rejected: Cannot enforce AppArmor: AppArmor is not enabled on the host' },
  ],
  ['unconfined, host without AppArmor', field('Unconfined'), NO_APPARMOR, { admit: true }],
  ['no profile, host without AppArmor', pod(), NO_APPARMOR, { admit: true }],
  ['a profile, host with AppArmor', field('RuntimeDefault'), undefined, { admit: true }],
  [
    'a running pod is not checked again',
    pod({ c: field('RuntimeDefault').spec!.containers[0], phase: 'Running' }),
    NO_APPARMOR,
    { admit: true },
  ],
  [
    'a pod without a phase (a static pod here) counts as pending',
    pod({ c: field('RuntimeDefault').spec!.containers[0], phase: '' }),
    NO_APPARMOR,
    { admit: false, reason: 'AppArmor', message: 'Pod was rejected: Cannot enforce AppArmor: AppArmor is not enabled on the host' },
  ],
];
for (const [name, p, hostError, want] of admitRows)
  test(`admitAppArmor: ${name}`, () => assert.deepEqual(admitAppArmor(p, hostError), want));
