// kubelet-ts's requests read by the pinned release's own test plugin, gcp-credential-provider
// (upstream's node e2e plugin, decoding with upstream's credentialprovider/v1 types), built by
// hack/build-gcp-credential-provider.sh. Skipped when it is not built. Only the cases the plugin
// refuses before it asks GCE's metadata server (no machine here reaches it) are run: each shows
// which field of the request it read.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { execPlugin } from './exec.ts';

const BIN_DIR = fileURLToPath(new URL('../../../_output/bin', import.meta.url));
const NAME = 'gcp-credential-provider';
const built = existsSync(`${BIN_DIR}/${NAME}`);
const V1 = 'credentialprovider.kubelet.k8s.io/v1';

// A JWS whose claims the plugin reads (it checks the audience, not the signature).
const jws = (claims: object) => `eyJhbGciOiJSUzI1NiJ9.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.c2ln`;
const EXPECTED_ANNOTATIONS = { 'domain.io/identity-id': '123456', 'domain.io/identity-type': 'serviceaccount' };

test("gcp-credential-provider reads kubelet-ts's request: the token and annotations of token mode", {
  skip: !built && `${NAME} not built`,
}, async () => {
  const run = (mode: 'serviceaccount' | '', token: string, annotations?: Record<string, string>) =>
    execPlugin({
      name: NAME,
      binDir: BIN_DIR,
      apiVersion: V1,
      args: [],
      env: mode ? [{ name: 'PLUGIN_MODE', value: mode }] : [],
      timeoutMs: 20_000,
    })({
      image: 'gcr.io/project/app',
      serviceAccountToken: token,
      ...(annotations ? { serviceAccountAnnotations: annotations } : {}),
    });
  const cases: { name: string; call: () => Promise<unknown>; want: RegExp }[] = [
    {
      name: 'a token outside token mode',
      call: () => run('', jws({ aud: ['test-audience'] })),
      want: /exit status 255: .*failed to get credentials: service account token is not expected/,
    },
    {
      name: 'token mode without the annotations it expects',
      call: () => run('serviceaccount', jws({ aud: ['test-audience'] }), { 'domain.io/identity-id': '123456' }),
      want: /failed to get credentials: unexpected service account annotations, want: map\[domain.io\/identity-id:123456 domain.io\/identity-type:serviceaccount\], got: map\[domain.io\/identity-id:123456\]/,
    },
    {
      name: "token mode with another audience's token",
      call: () => run('serviceaccount', jws({ aud: ['another'] }), EXPECTED_ANNOTATIONS),
      want: /failed to get credentials: unexpected audience: \[another\]/,
    },
  ];
  for (const c of cases) {
    await assert.rejects(c.call(), (e: Error) => {
      assert.match(e.message, /^error execing credential provider plugin gcp-credential-provider for image gcr.io\/project\/app: /, c.name);
      assert.match(e.message, c.want, c.name);
      return true;
    });
  }
});
