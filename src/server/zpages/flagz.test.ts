import { test } from 'node:test';
import assert from 'node:assert/strict';
import { flagzDocument, flagzText } from './flagz.ts';

const flags = { v: '2', 'eviction-hard': 'memory.available<100Mi', address: '0.0.0.0' };

test('flagzText: the header, then the flags sorted, name and value joined by the separator, unescaped', () => {
  assert.equal(
    flagzText('kubelet', flags, '='),
    '\nkubelet flagz\nWarning: This endpoint is not meant to be machine parseable, has no formatting compatibility guarantees and is for debugging purposes only.\n' +
      'address=0.0.0.0\neviction-hard=memory.available<100Mi\nv=2\n',
  );
  assert.match(flagzText('kubelet', {}, ': '), /purposes only\.\n$/);
});

test('flagzDocument: the Flagz type, its map sorted, omitted when empty', () => {
  assert.equal(
    JSON.stringify(flagzDocument('kubelet', flags, 'v1beta1')),
    '{"kind":"Flagz","apiVersion":"config.k8s.io/v1beta1","metadata":{"name":"kubelet"},"flags":{"address":"0.0.0.0","eviction-hard":"memory.available<100Mi","v":"2"}}',
  );
  assert.deepEqual(flagzDocument('kubelet', {}, 'v1alpha1'), {
    kind: 'Flagz',
    apiVersion: 'config.k8s.io/v1alpha1',
    metadata: { name: 'kubelet' },
  });
});
