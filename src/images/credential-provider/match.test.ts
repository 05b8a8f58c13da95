import { test } from 'node:test';
import assert from 'node:assert/strict';
import { imageAllowed, parseSchemelessURL, registryOf } from './match.ts';

test('imageAllowed: matchImages globs per host label, the port, a path prefix (upstream URLsMatchStr, isImageAllowed)', () => {
  const cases: [string[], string, boolean][] = [
    // A literal host: its images, not another host's or a subdomain's.
    [['registry.io'], 'registry.io/foo/bar', true],
    [['registry.io'], 'registry.io', true],
    [['registry.io'], 'sub.registry.io/foo', false],
    [['registry.io'], 'registry.io.evil.com/foo', false],
    [['registry.io'], 'registry.io:5000/foo', false],
    // A glob is one label; the number of labels must agree.
    [['*.registry.io'], 'test.registry.io/foo', true],
    [['*.registry.io'], 'registry.io/foo', false],
    [['*.registry.io'], 'a.b.registry.io/foo', false],
    [['*.*.registry.io'], 'a.b.registry.io/foo', true],
    [['*.*.registry.io'], 'a.registry.io/foo', false],
    [['prefix.*.io'], 'prefix.kubernetes.io', true],
    [['prefix.kubernetes.*'], 'prefix.kubernetes.io', true],
    [['*-good.kubernetes.io'], 'prefix-good.kubernetes.io', true],
    [['*-good.kubernetes.io'], 'prefix-bad.kubernetes.io', false],
    [['*.dkr.ecr.*.amazonaws.com'], '123456789012.dkr.ecr.us-east-1.amazonaws.com/app', true],
    [['*.dkr.ecr.*.amazonaws.com'], '123456789012.dkr.ecr.us-east-1.amazonaws.com.cn/app', false],
    [['*.azurecr.io'], 'myregistry.azurecr.io/app', true],
    [['*-docker.pkg.dev'], 'us-docker.pkg.dev/proj/repo/img', true],
    // "?" starts the URL's query: the pattern's host is "registry", one label.
    [['registry?.io'], 'registry1.io/x', false],
    [['registr?.io'], 'registry.io/x', false],
    [['regis*.io'], 'registry.io/x', true],
    [['registry[0-9].io'], 'registry7.io/x', true],
    [['registry[0-9].io'], 'registryx.io/x', false],
    [['registry[.io'], 'registry[.io/x', false], // a bad pattern matches nothing
    // Ports: the same, or none on both sides; never a glob.
    [['*.registry.io:8080'], 'test.registry.io:8080/foo', true],
    [['*.registry.io:8080'], 'test.registry.io:8081/foo', false],
    [['*.registry.io:8080'], 'test.registry.io/foo', false],
    [['localhost:5000'], 'localhost:5000/app', true],
    [['172.30.255.10:5005'], '172.30.255.10:5005/e2e/busybox', true],
    [['172.30.255.*:5005'], '172.30.255.10:5005/e2e/busybox', true],
    // A path is a string prefix of the image's path.
    [['registry.io/foo'], 'registry.io/foo/bar', true],
    [['registry.io/foo'], 'registry.io/foobar', true],
    [['registry.io/foo/bar'], 'registry.io/foo', false],
    [['*.kubernetes.io/blah'], 'prefix.kubernetes.io/blah', true],
    [['prefix.*.io:1111/foo'], 'prefix.kubernetes.io:1111/foo/bar', true],
    [['prefix.*.io:1111/foo'], 'prefix.kubernetes.io:1111/bar', false],
    // Docker Hub images are looked up under docker.io.
    [['docker.io'], 'docker.io/library/busybox', true],
    [['*.io'], 'docker.io/library/busybox', true],
    // Any of several patterns.
    [['a.io', 'b.io'], 'b.io/x', true],
    [['a.io', 'b.io'], 'c.io/x', false],
    [[], 'a.io/x', false],
  ];
  for (const [patterns, image, want] of cases) assert.equal(imageAllowed(patterns, image), want, `${patterns} ~ ${image}`);
});

test("parseSchemelessURL: the errors of Go's url.Parse a pattern can hit", () => {
  const cases: [string, string | undefined][] = [
    ['registry.io', undefined],
    ['*.registry.io:8080/path', undefined],
    ['[::1]:5000', undefined],
    ['registry.io:port', 'parse "https://registry.io:port": invalid port ":port" after host'],
    ['[::1]x', 'parse "https://[::1]x": invalid port "x" after host'],
    ['reg istry.io', 'parse "https://reg istry.io": invalid character " " in host name'],
    // upstream's config_test "invalid match image"
    ['%invalid%', 'parse "https://%invalid%": invalid URL escape "%in"'],
    ['registry.io/a%2Fb', undefined],
    ['regis%74ry.io', 'parse "https://regis%74ry.io": invalid URL escape "%74"'],
    ['regis%C3%A9try.io', undefined],
    ['registry.io/a%zz', 'parse "https://registry.io/a%zz": invalid URL escape "%zz"'],
    ['registry.io?%zz', undefined],
    ['registry.io\n', 'parse "https://registry.io\\n": net/url: invalid control character in URL'],
  ];
  for (const [s, want] of cases) assert.equal(parseSchemelessURL(s).error, want, s);
});

test('registryOf: the first path element (upstream parseRegistry)', () => {
  assert.equal(registryOf('registry.io:5000/a/b'), 'registry.io:5000');
  assert.equal(registryOf('docker.io/library/busybox'), 'docker.io');
});
