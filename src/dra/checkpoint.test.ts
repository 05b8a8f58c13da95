// The checkpoint against upstream's own test data (cm/dra/state/checkpointer_test.go at the pin):
// ours writes the same bytes, reads theirs, and a corrupt one neither crashes nor is believed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import type { ClaimInfo } from './claims.ts';
import { CHECKPOINT_FILE, decodeCheckpoint, encodeCheckpoint } from './checkpoint.ts';
import { DraManager } from './manager.ts';

const POD = '139cdb46-f989-4f17-9561-ca10cfb509a6';
const info = (over: Partial<ClaimInfo>): ClaimInfo => ({
  claimUID: '067798be-454e-4be4-9047-1aa06aea63f7',
  claimName: 'example',
  namespace: 'default',
  podUIDs: new Set([POD]),
  drivers: new Map([
    [
      'test-driver.cdi.k8s.io',
      [{ poolName: 'worker-1', deviceName: 'dev-1', requestNames: ['test request'], cdiDeviceIds: ['example.com/example=cdi-example'] }],
    ],
  ]),
  prepared: false,
  ...over,
});

const cases: [string, ClaimInfo[], string][] = [
  [
    'nothing',
    [],
    String.raw`{"Data":"{\"kind\":\"DRACheckpoint\",\"apiVersion\":\"checkpoint.dra.kubelet.k8s.io/v1\",\"ClaimInfoStateList\":[]}","Checksum":%}`,
  ],
  [
    'a shared device',
    [
      info({
        drivers: new Map([
          [
            'test-driver.cdi.k8s.io',
            [
              {
                poolName: 'worker-1',
                deviceName: 'dev-1',
                shareId: 'aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa',
                requestNames: ['test request'],
                cdiDeviceIds: ['example.com/example=cdi-example'],
              },
            ],
          ],
        ]),
      }),
    ],
    String.raw`{"Data":"{\"kind\":\"DRACheckpoint\",\"apiVersion\":\"checkpoint.dra.kubelet.k8s.io/v1\",\"ClaimInfoStateList\":[{\"ClaimUID\":\"067798be-454e-4be4-9047-1aa06aea63f7\",\"ClaimName\":\"example\",\"Namespace\":\"default\",\"PodUIDs\":{\"139cdb46-f989-4f17-9561-ca10cfb509a6\":{}},\"DriverState\":{\"test-driver.cdi.k8s.io\":{\"Devices\":[{\"PoolName\":\"worker-1\",\"DeviceName\":\"dev-1\",\"ShareID\":\"aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa\",\"RequestNames\":[\"test request\"],\"CDIDeviceIDs\":[\"example.com/example=cdi-example\"]}]}}}]}","Checksum":736302156}`,
  ],
  [
    'two claims, one device without requests or CDI devices',
    [
      info({ claimName: 'example-1' }),
      info({
        claimUID: '4cf8db2d-06c0-7d70-1a51-e59b25b2c16c',
        claimName: 'example-2',
        drivers: new Map([['test-driver.cdi.k8s.io', [{ poolName: 'worker-1', deviceName: 'dev-2', requestNames: [], cdiDeviceIds: [] }]]]),
      }),
    ],
    String.raw`{"Data":"{\"kind\":\"DRACheckpoint\",\"apiVersion\":\"checkpoint.dra.kubelet.k8s.io/v1\",\"ClaimInfoStateList\":[{\"ClaimUID\":\"067798be-454e-4be4-9047-1aa06aea63f7\",\"ClaimName\":\"example-1\",\"Namespace\":\"default\",\"PodUIDs\":{\"139cdb46-f989-4f17-9561-ca10cfb509a6\":{}},\"DriverState\":{\"test-driver.cdi.k8s.io\":{\"Devices\":[{\"PoolName\":\"worker-1\",\"DeviceName\":\"dev-1\",\"ShareID\":null,\"RequestNames\":[\"test request\"],\"CDIDeviceIDs\":[\"example.com/example=cdi-example\"]}]}}},{\"ClaimUID\":\"4cf8db2d-06c0-7d70-1a51-e59b25b2c16c\",\"ClaimName\":\"example-2\",\"Namespace\":\"default\",\"PodUIDs\":{\"139cdb46-f989-4f17-9561-ca10cfb509a6\":{}},\"DriverState\":{\"test-driver.cdi.k8s.io\":{\"Devices\":[{\"PoolName\":\"worker-1\",\"DeviceName\":\"dev-2\",\"ShareID\":null,\"RequestNames\":null,\"CDIDeviceIDs\":null}]}}}]}","Checksum":2820117767}`,
  ],
  [
    'a driver without devices, pods in order, a name Go escapes',
    [info({ claimName: 'a<b>&c', podUIDs: new Set(['p2', 'p1']), drivers: new Map([['z.example.com', []]]) })],
    String.raw`{"Data":"{\"kind\":\"DRACheckpoint\",\"apiVersion\":\"checkpoint.dra.kubelet.k8s.io/v1\",\"ClaimInfoStateList\":[{\"ClaimUID\":\"067798be-454e-4be4-9047-1aa06aea63f7\",\"ClaimName\":\"a\\u003cb\\u003e\\u0026c\",\"Namespace\":\"default\",\"PodUIDs\":{\"p1\":{},\"p2\":{}},\"DriverState\":{\"z.example.com\":{\"Devices\":null}}}]}","Checksum":%}`,
  ],
];

test("encoded as upstream's checkpoint manager writes it, and read back", () => {
  for (const [what, claims, golden] of cases) {
    const text = encodeCheckpoint(claims);
    // Checksums upstream's test data gives are compared; for ours, the CRC-32 is checked on decoding.
    if (golden.includes('"Checksum":%}')) assert.equal(text.replace(/"Checksum":\d+}$/, '"Checksum":%}'), golden, what);
    else assert.equal(text, golden, what);
    const back = decodeCheckpoint(text);
    assert.deepEqual(
      back,
      claims.map((c) => ({ ...c, podUIDs: new Set([...c.podUIDs].sort()) })),
      what,
    );
  }
});

test('an older checkpoint without RequestNames and ShareID is read (upstream upgraded-structure)', () => {
  const older = String.raw`{"Data":"{\"kind\":\"DRACheckpoint\",\"apiVersion\":\"checkpoint.dra.kubelet.k8s.io/v0\",\"ClaimInfoStateList\":[{\"ClaimUID\":\"067798be-454e-4be4-9047-1aa06aea63f7\",\"ClaimName\":\"example\",\"Namespace\":\"default\",\"PodUIDs\":{\"139cdb46-f989-4f17-9561-ca10cfb509a6\":{}},\"DriverState\":{\"test-driver.cdi.k8s.io\":{\"Devices\":[{\"PoolName\":\"worker-1\",\"DeviceName\":\"dev-1\",\"CDIDeviceIDs\":[\"example.com/example=cdi-example\"]}]}}}]}","Checksum":1284376732}`;
  assert.deepEqual(decodeCheckpoint(older), [
    info({
      drivers: new Map([
        [
          'test-driver.cdi.k8s.io',
          [{ poolName: 'worker-1', deviceName: 'dev-1', requestNames: [], cdiDeviceIds: ['example.com/example=cdi-example'] }],
        ],
      ]),
    }),
  ]);
});

test('a corrupt checkpoint is refused; the manager logs it and starts empty', () => {
  const good = encodeCheckpoint([info({})]);
  const corrupt: [string, string, RegExp][] = [
    ['data changed', good.replace('dev-1', 'dev-9'), /checkpoint is corrupted/],
    ['checksum changed', good.replace(/"Checksum":(\d+)/, (_, n) => `"Checksum":${Number(n) + 1}`), /checkpoint is corrupted/],
    ['truncated', good.slice(0, 40), /JSON/],
    ['not a checkpoint', '{}', /no Data/],
  ];
  const dir = mkdtempSync(join(tmpdir(), 'dra-checkpoint-'));
  try {
    for (const [what, text, error] of corrupt) {
      assert.throws(() => decodeCheckpoint(text), error, what);
      writeFileSync(join(dir, CHECKPOINT_FILE), text);
      const errors: string[] = [];
      const log = { info() {}, v() {}, warn() {}, error: (m: string) => errors.push(m) };
      const m = new DraManager({
        rootDir: dir,
        api: { get: async () => assert.fail('no claim is read') },
        plugins: { get: () => assert.fail('no driver is called') },
        log,
        activePods: () => [],
        sourcesReady: () => true,
      });
      m.start();
      m.stop();
      assert.deepEqual(errors, ['Failed to read or create the DRA checkpoint, starting without the claims it held'], what);
      const pod = {
        metadata: { name: 'p', namespace: 'default', uid: POD },
        spec: { containers: [], resourceClaims: [{ name: 'c', resourceClaimName: 'example' }] },
      } as unknown as Pod;
      assert.throws(() => m.cdiDevices(pod, { name: 'app', resources: { claims: [{ name: 'c' }] } } as Container), {
        message: 'internal error: unable to get claim info for ResourceClaim example in namespace default',
      });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
