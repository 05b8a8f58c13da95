import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { kernelHostname, podHostNameAndDomain } from './hostname.ts';

const pod = (spec: Record<string, unknown> = {}, name = 'web'): Pod => ({
  metadata: { name, namespace: 'ns' },
  spec: { containers: [], ...spec },
});

test('hostname and domain as upstream GeneratePodHostNameAndDomain', () => {
  const cases: [string, Pod, { hostname: string; domain: string }][] = [
    ['the pod name', pod(), { hostname: 'web', domain: '' }],
    ['hostname and subdomain', pod({ hostname: 'h', subdomain: 's' }), { hostname: 'h', domain: 's.ns.svc.cluster.local' }],
    ['a long name, truncated without a trailing dash', pod({}, `${'a'.repeat(62)}-b`), { hostname: 'a'.repeat(62), domain: '' }],
    [
      'hostnameOverride wins over hostname and subdomain, with no domain',
      pod({ hostname: 'h', subdomain: 's', hostnameOverride: 'o.example' }),
      { hostname: 'o.example', domain: '' },
    ],
  ];
  for (const [name, p, want] of cases) assert.deepEqual(podHostNameAndDomain(p, 'cluster.local'), want, name);
  // HostnameOverride off: the field is not looked at.
  const override = pod({ hostname: 'h', subdomain: 's', hostnameOverride: 'o.example' });
  assert.deepEqual(podHostNameAndDomain(override, 'cluster.local', false), { hostname: 'h', domain: 's.ns.svc.cluster.local' });
  assert.equal(kernelHostname(override, 'cluster.local', false), 'h');
});

test('the kernel hostname as upstream GetNodenameForKernel: the FQDN with setHostnameAsFQDN, refused over 64 characters', () => {
  assert.equal(kernelHostname(pod({ hostname: 'h', subdomain: 's' }), 'cluster.local'), 'h');
  assert.equal(
    kernelHostname(pod({ hostname: 'h', subdomain: 's', setHostnameAsFQDN: true }), 'cluster.local'),
    'h.s.ns.svc.cluster.local',
  );
  assert.equal(kernelHostname(pod({ setHostnameAsFQDN: true }), 'cluster.local'), 'web', 'no subdomain: no FQDN');
  const long = kernelHostname(pod({ hostname: 'h'.repeat(40), subdomain: 's'.repeat(20), setHostnameAsFQDN: true }), 'cluster.local');
  assert.deepEqual(long, {
    error: `failed to construct FQDN from pod hostname and cluster domain, FQDN ${'h'.repeat(40)}.${'s'.repeat(20)}.ns.svc.cluster.local is too long (64 characters is the max, 82 characters requested)`,
  });
});
