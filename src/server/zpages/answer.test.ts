import { test } from 'node:test';
import assert from 'node:assert/strict';
import { goJSON, goYAML, zpageAnswer } from './answer.ts';

const content = {
  kind: 'Statusz' as const,
  text: () => 'the text\n',
  document: (version: string) => ({
    kind: 'Statusz',
    apiVersion: `config.k8s.io/${version}`,
    metadata: { name: 'kubelet' },
    paths: ['/a<b'],
  }),
};

test('goJSON: encoding/json compact with its newline, or MarshalIndent without; <, > and & escaped', () => {
  assert.equal(goJSON({ a: '<&>', b: [1] }, false), '{"a":"\\u003c\\u0026\\u003e","b":[1]}\n');
  assert.equal(goJSON({ a: {}, b: [] }, true), '{\n  "a": {},\n  "b": []\n}');
});

test('goYAML: keys sorted, lists under their key unindented, ambiguous strings quoted', () => {
  assert.equal(
    goYAML({
      z: 1,
      a: ['/x', '0'],
      t: '2026-12-04T10:00:00Z',
      b: 'true',
      e: '1.36',
      m: {},
      n: '',
      s: '[]',
      y: 'yes',
      w: 'a: b',
      p: '1m0s',
    }),
    'a:\n- /x\n- "0"\nb: "true"\ne: "1.36"\nm: {}\nn: ""\np: 1m0s\ns: \'[]\'\nt: "2026-12-04T10:00:00Z"\nw: \'a: b\'\ny: "yes"\nz: 1\n',
  );
});

test('zpageAnswer: the text, the documents with their content type, the 406 Status', () => {
  assert.deepEqual(zpageAnswer({ as: 'text' }, content), {
    status: 200,
    headers: { 'Content-Type': 'text/plain; charset=utf-8' },
    body: 'the text\n',
  });
  assert.deepEqual(zpageAnswer({ as: 'structured', mediaType: 'application/json', version: 'v1beta1', pretty: false }, content), {
    status: 200,
    headers: { 'Content-Type': 'application/json;g=config.k8s.io;v=v1beta1;as=Statusz' },
    body: '{"kind":"Statusz","apiVersion":"config.k8s.io/v1beta1","metadata":{"name":"kubelet"},"paths":["/a\\u003cb"]}\n',
  });
  assert.deepEqual(zpageAnswer({ as: 'structured', mediaType: 'application/yaml', version: 'v1alpha1', pretty: false }, content), {
    status: 200,
    headers: {
      'Content-Type': 'application/yaml;g=config.k8s.io;v=v1alpha1;as=Statusz',
      Warning: '299 - "This version of the statusz endpoint is deprecated. Please use a newer version."',
    },
    body: 'apiVersion: config.k8s.io/v1alpha1\nkind: Statusz\nmetadata:\n  name: kubelet\npaths:\n- /a<b\n',
  });
  const message = 'only the following media types are accepted: application/json, application/yaml, text/plain';
  assert.deepEqual(zpageAnswer({ as: 'notAcceptable', mediaType: 'application/json', pretty: false }, content), {
    status: 406,
    headers: { 'Content-Type': 'application/json' },
    body: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"${message}","reason":"NotAcceptable","code":406}\n`,
  });
  assert.deepEqual(zpageAnswer({ as: 'notAcceptable', mediaType: undefined, pretty: true }, content), {
    status: 406,
    headers: { 'Content-Type': 'application/json' },
    body: `{\n  "kind": "Status",\n  "apiVersion": "v1",\n  "metadata": {},\n  "status": "Failure",\n  "message": "${message}",\n  "reason": "NotAcceptable",\n  "code": 406\n}`,
  });
});
