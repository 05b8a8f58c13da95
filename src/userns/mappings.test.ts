import { test } from 'node:test';
import assert from 'node:assert/strict';
import { type HandlerFeatures, mappingsFileContent, parseMappingsFile, podUserNamespace, userNamespacesRefusal } from './mappings.ts';

test("the userns file: upstream's JSON, read back with its checks", () => {
  const text = mappingsFileContent(131072, 65536);
  assert.equal(
    text,
    '{"uidMappings":[{"hostId":131072,"containerId":0,"length":65536}],"gidMappings":[{"hostId":131072,"containerId":0,"length":65536}]}',
  );
  assert.deepEqual(parseMappingsFile(text), { hostId: 131072, length: 65536 });
  const m = (hostId: number, containerId = 0, length = 65536) => ({ hostId, containerId, length });
  const rows: [string, unknown, RegExp][] = [
    ['not JSON', '{', /^Error: invalid user namespace mappings file: /],
    ['no mappings', {}, /^Error: invalid user namespace configuration: no more than one mapping allowed\.$/],
    ['two', { uidMappings: [m(1), m(2)], gidMappings: [m(1), m(2)] }, /no more than one mapping allowed\.$/],
    ['no gids', { uidMappings: [m(65536)] }, /^Error: invalid user namespace configuration: GID and UID mappings should be identical\.$/],
    [
      'different gids',
      { uidMappings: [m(65536)], gidMappings: [m(131072)] },
      /^Error: invalid user namespace configuration: GID and UID mapping should be identical$/,
    ],
    [
      'root not mapped',
      { uidMappings: [m(65536, 1)], gidMappings: [m(65536, 1)] },
      /^Error: invalid user namespace configuration: UID 0 must be mapped$/,
    ],
  ];
  for (const [name, content, want] of rows)
    assert.throws(() => parseMappingsFile(typeof content === 'string' ? content : JSON.stringify(content)), want, name);
});

test('podUserNamespace: mode POD, container IDs 0.. on the host range, for users and groups', () => {
  assert.deepEqual(podUserNamespace(131072, 65536), {
    mode: 'POD',
    uids: [{ hostId: 131072, containerId: 0, length: 65536 }],
    gids: [{ hostId: 131072, containerId: 0, length: 65536 }],
  });
});

test("userNamespacesRefusal: HandlerSupportsUserNamespaces with GetOrCreateUserNamespaceMappings' words", () => {
  const runc: HandlerFeatures = { name: '', features: { userNamespaces: true } };
  const gvisor: HandlerFeatures = { name: 'gvisor', features: { userNamespaces: false } };
  const noRuntime = "can't set `spec.hostUsers: false`, runtime does not support user namespaces";
  const noGvisor = 'can\'t set `spec.hostUsers: false`, RuntimeClass handler "gvisor" does not support user namespaces';
  const rows: [string, string, HandlerFeatures[], string | undefined][] = [
    ['the default handler supports it', '', [runc, gvisor], undefined],
    ['a runtime that lists no handlers (containerd 1.6)', '', [], noRuntime],
    ['the default handler without it', '', [{ name: '', features: { userNamespaces: false } }], noRuntime],
    ['a handler without it', 'gvisor', [runc, gvisor], noGvisor],
    ['a handler without features', 'gvisor', [runc, { name: 'gvisor' }], noGvisor],
    ['a handler not listed', 'kata', [runc], `${noGvisor.replaceAll('gvisor', 'kata')}: the handler "kata" is not known`],
    ['no handlers, a RuntimeClass', 'kata', [], noGvisor.replaceAll('gvisor', 'kata')],
  ];
  for (const [name, handler, handlers, want] of rows) assert.equal(userNamespacesRefusal(handler, handlers), want, name);
});
