import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isPrettyPrint, negotiateZpage, parseAccept } from './negotiate.ts';

test('parseAccept sorts as goautoneg: q first, then concrete before wildcard, stable otherwise', () => {
  const cases: [header: string, clauses: string[]][] = [
    ['application/json, */*', ['application/json', '*/*']],
    ['*/*, application/json', ['application/json', '*/*']],
    ['text/*;q=0.5, application/yaml', ['application/yaml', 'text/*']],
    ['a/b;q=0.2, c/d;q=0.9, e/f', ['e/f', 'c/d', 'a/b']],
    ['*', ['*/*']],
    ['text, text/, a/b/c, x/y', ['x/y']],
    ['a/b;q=x, c/d;q=0', ['a/b', 'c/d']],
    ['', []],
  ];
  for (const [header, want] of cases)
    assert.deepEqual(
      parseAccept(header).map((c) => `${c.type}/${c.subType}`),
      want,
      header,
    );
  assert.deepEqual(parseAccept(' application/json ; as=Statusz ;v=v1beta1; g = config.k8s.io;bad;x=1=2')[0], {
    type: 'application',
    subType: 'json',
    q: 1,
    params: { as: 'Statusz', v: 'v1beta1', g: 'config.k8s.io' },
  });
});

const req = (accept: string, rawQuery = '', userAgent = 'kubectl/v1.36.3') => ({ accept, rawQuery, userAgent });
const beta = ';as=Statusz;v=v1beta1;g=config.k8s.io';

test('negotiateZpage decides as handleStatusz and handleFlagz', () => {
  const cases: [accept: string, want: ReturnType<typeof negotiateZpage>][] = [
    ['', { as: 'text' }],
    ['   ', { as: 'text' }],
    ['text/plain', { as: 'text' }],
    ['text/*', { as: 'text' }],
    ['*/*', { as: 'text' }],
    // kubectl get --raw's: JSON without a kind is refused, so */* gives the text.
    ['application/json, */*', { as: 'text' }],
    [`application/json${beta}`, { as: 'structured', mediaType: 'application/json', version: 'v1beta1', pretty: false }],
    [
      'application/json;as=Statusz;v=v1alpha1;g=config.k8s.io',
      { as: 'structured', mediaType: 'application/json', version: 'v1alpha1', pretty: false },
    ],
    [`application/yaml${beta}`, { as: 'structured', mediaType: 'application/yaml', version: 'v1beta1', pretty: false }],
    [`application/*${beta}`, { as: 'structured', mediaType: 'application/json', version: 'v1beta1', pretty: false }],
    [`*/*${beta}`, { as: 'structured', mediaType: 'application/json', version: 'v1beta1', pretty: false }],
    [`application/json${beta};pretty=1`, { as: 'structured', mediaType: 'application/json', version: 'v1beta1', pretty: true }],
    [`application/json${beta}, text/plain;q=0.5`, { as: 'structured', mediaType: 'application/json', version: 'v1beta1', pretty: false }],
    [`application/json${beta};q=0.5, text/plain`, { as: 'text' }],
    // A structured type without the kind, or a kind the endpoint does not know: 406, the Status negotiated again.
    ['application/json', { as: 'notAcceptable', mediaType: 'application/json', pretty: false }],
    ['application/yaml', { as: 'notAcceptable', mediaType: 'application/yaml', pretty: false }],
    ['application/json;as=Flagz;v=v1beta1;g=config.k8s.io', { as: 'notAcceptable', mediaType: undefined, pretty: true }],
    ['application/json;as=Statusz;v=v1;g=config.k8s.io', { as: 'notAcceptable', mediaType: undefined, pretty: true }],
    ['application/json;as=Statusz;v=v1beta1', { as: 'notAcceptable', mediaType: undefined, pretty: true }],
    [`text/plain${beta}`, { as: 'notAcceptable', mediaType: undefined, pretty: true }],
    [`application/json${beta};stream=watch`, { as: 'notAcceptable', mediaType: undefined, pretty: true }],
    [`application/json${beta};sv=v1`, { as: 'notAcceptable', mediaType: undefined, pretty: true }],
    ['application/xml', { as: 'notAcceptable', mediaType: undefined, pretty: true }],
    ['application/vnd.kubernetes.protobuf', { as: 'notAcceptable', mediaType: undefined, pretty: true }],
    ['text/html', { as: 'notAcceptable', mediaType: undefined, pretty: true }],
  ];
  for (const [accept, want] of cases) assert.deepEqual(negotiateZpage('Statusz', req(accept)), want, accept);
  assert.deepEqual(negotiateZpage('Flagz', req('application/json;as=Flagz;v=v1beta1;g=config.k8s.io')), {
    as: 'structured',
    mediaType: 'application/json',
    version: 'v1beta1',
    pretty: false,
  });
  assert.equal(negotiateZpage('Flagz', req(`application/json${beta}`)).as, 'notAcceptable');
});

test('isPrettyPrint: ?pretty as a bool, else a human client', () => {
  const cases: [rawQuery: string, ua: string, want: boolean][] = [
    ['', 'kubectl/v1.36.3', false],
    ['', 'curl/8.5.0', true],
    ['', 'Wget/1.21', true],
    ['', 'Mozilla/5.0 (X11)', true],
    ['pretty=true', 'kubectl', true],
    ['pretty=1', 'kubectl', true],
    ['pretty=false', 'curl/8', false],
    ['pretty=nope', 'curl/8', false],
    ['pretty', 'curl/8', true],
  ];
  for (const [q, ua, want] of cases) assert.equal(isPrettyPrint(q, ua), want, `${q} ${ua}`);
  assert.equal((negotiateZpage('Statusz', req(`application/json${beta}`, '', 'curl/8')) as { pretty: boolean }).pretty, true);
});
