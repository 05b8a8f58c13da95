import { test } from 'node:test';
import assert from 'node:assert/strict';
import { expandStatic, resolveContainerPort } from './port.ts';
import { httpProbeRequest, PROBE_USER_AGENT } from './http.ts';

const c = {
  ports: [
    { name: 'http', containerPort: 8080 },
    { name: 'admin', containerPort: 9090 },
  ],
};
const ports: [number | string | undefined, number | { error: string }][] = [
  [80, 80],
  ['http', 8080],
  ['8081', 8081],
  ['web', { error: 'strconv.Atoi: parsing "web": invalid syntax' }],
  [0, { error: 'invalid port number: 0' }],
  [70000, { error: 'invalid port number: 70000' }],
];
for (const [port, want] of ports)
  test(`resolveContainerPort(${JSON.stringify(port)})`, () => assert.deepEqual(resolveContainerPort(port, c), want));

test('expandStatic: $(VAR) from literal env values only; $$ escapes; unknown stays', () => {
  const env = [
    { name: 'A', value: 'x' },
    { name: 'B', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
  ];
  assert.deepEqual(expandStatic(['echo', '$(A)-$(B)-$$(A)-$(C)'], env), ['echo', 'x-$(B)-$(A)-$(C)']);
});

test('httpProbeRequest: pod IP, named port, scheme, path, headers with defaults', () => {
  assert.deepEqual(httpProbeRequest({ port: 'http', path: '/healthz' }, c, '10.88.0.5'), {
    url: 'http://10.88.0.5:8080/healthz',
    headers: [
      ['User-Agent', PROBE_USER_AGENT],
      ['Accept', '*/*'],
    ],
  });
  assert.deepEqual(
    httpProbeRequest(
      {
        port: 443,
        scheme: 'HTTPS',
        host: 'example.test',
        httpHeaders: [
          { name: 'x-custom', value: '1' },
          { name: 'user-agent', value: 'mine' },
          { name: 'Accept', value: '' },
        ],
      },
      c,
      '10.88.0.5',
    ),
    {
      url: 'https://example.test:443',
      headers: [
        ['X-Custom', '1'],
        ['User-Agent', 'mine'],
      ],
    },
  );
  assert.deepEqual(httpProbeRequest({ port: 80, path: 'x?y=1' }, c, 'fd00::5'), {
    url: 'http://[fd00::5]:80/x?y=1',
    headers: [
      ['User-Agent', PROBE_USER_AGENT],
      ['Accept', '*/*'],
    ],
  });
  assert.deepEqual(httpProbeRequest({ port: 'nope' }, c, '10.88.0.5'), { error: 'strconv.Atoi: parsing "nope": invalid syntax' });
  assert.equal(PROBE_USER_AGENT, 'kube-probe/1.36');
});
