import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Container, EnvVar } from 'kubernetes-types/core/v1.js';
import { MAX_LINE_BYTES, fileKeyId, fileKeyRefOf, fileKeyRefs, parseEnv, parseEnvContent, scanLines } from './env-file.ts';

type Case = { name: string; content: string; key: string; want?: string; errContains?: string };

// pkg/kubelet/util/env/env_util_test.go TestParseEnv, case for case.
const upstream: Case[] = [
  {
    name: 'ignore leading whitespace',
    content: `   KEY1='val1'
		KEY2='val2'
KEY3='val3'
`,
    key: 'KEY2',
    want: `val2`,
  },
  {
    name: 'ignore blank and comment lines',
    content: `# comment

KEY1='foo'
   # another comment

KEY2='bar'
`,
    key: 'KEY2',
    want: `bar`,
  },
  {
    name: 'whitespace around = and not allowed',
    content: `KEY1 = 'val1'
KEY2=   'val2'
KEY3='val3'
`,
    key: 'KEY2',
    errContains: `whitespace before '=' is not allowed`,
  },
  {
    name: 'key not found returns empty',
    content: `KEY1='foo'
KEY2='bar'
`,
    key: 'KEY3',
    want: ``,
  },
  {
    name: 'value with embedded #',
    content: `KEY1='foo#notcomment'
KEY2='bar'
`,
    key: 'KEY1',
    want: `foo#notcomment`,
  },
  {
    name: 'key with whitespace (should error)',
    content: `KEY1 ='foo'
KEY2='bar'
`,
    key: 'KEY1',
    errContains: "whitespace before '=' is not allowed",
  },
  {
    name: 'value with leading and trailing whitespace',
    content: `KEY1='   foo bar   '
KEY2='bar'
`,
    key: 'KEY1',
    want: `   foo bar   `,
  },
  {
    name: 'multiple comments and blank lines',
    content: `# first comment

# second comment
KEY1='foo'

# third comment
KEY2='bar'
`,
    key: 'KEY2',
    want: `bar`,
  },
  {
    name: 'empty value',
    content: `KEY1='foo'
KEY2=''
KEY3='bar'
`,
    key: 'KEY2',
    want: ``,
  },
  {
    name: 'key is empty (should error)',
    content: `='foo'
KEY2='bar'
`,
    key: 'KEY2',
    errContains: 'invalid environment variable format',
  },
  {
    name: 'multiple = in value',
    content: `KEY1='foo=bar=baz'
KEY2='bar'
`,
    key: 'KEY1',
    want: `foo=bar=baz`,
  },
  {
    name: 'comment after key value pair',
    content: `KEY1='foo'
KEY2='bar' # comment
`,
    key: 'KEY2',
    want: `bar`,
  },
  {
    name: 'missing key triggers error with line number',
    content: `='foo'
KEY2='bar'`,
    key: 'KEY2',
    errContains: 'at line 1',
  },
  {
    name: 'value contains $VAR, should not expand',
    content: `KEY1='$VAR'
KEY2='bar'`,
    key: 'KEY1',
    want: `$VAR`,
  },
  {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: upstream's case name, not a template
    name: 'value contains ${VAR}, should not expand',
    content: `KEY1='\${VAR}'
KEY2='bar'`,
    key: 'KEY1',
    want: `\${VAR}`,
  },
  {
    name: 'value contains $HOME, should not expand',
    content: `KEY1='$HOME'
KEY2='bar'`,
    key: 'KEY1',
    want: `$HOME`,
  },
  {
    name: 'value contains mixed shell variable syntax, should not expand',
    content: `KEY1='foo$BAR-\${HOME}_$'
KEY2='bar'`,
    key: 'KEY1',
    want: `foo$BAR-\${HOME}_$`,
  },
  {
    name: 'invalid line triggers error with line number',
    content: `KEY1='foo'
INVALID_LINE
KEY2='bar'
`,
    key: 'KEY2',
    errContains: 'at line 2',
  },
  {
    name: 'unquoted value triggers error',
    content: `KEY1='foo'
KEY2=bar
KEY3='baz'
`,
    key: 'KEY2',
    errContains: 'value must be enclosed in single quotes',
  },
  {
    name: 'double quoted value triggers error',
    content: `KEY1='foo'
KEY2="bar"
KEY3='baz'
`,
    key: 'KEY2',
    errContains: 'value must be enclosed in single quotes',
  },
  {
    name: 'value with multiple adjacent quoted strings',
    content: `KEY1='foo''bar'`,
    key: 'KEY1',
    errContains: `unexpected content after closing quote`,
  },
  {
    name: 'unclosed single quote triggers error',
    content: `KEY1='foo'
KEY2='bar
KEY3='baz'
`,
    key: 'KEY2',
    errContains: 'unexpected content after closing quote',
  },
  {
    name: 'content after closing quote triggers error',
    content: `KEY1='foo'
KEY2='bar'baz
KEY3='baz'
`,
    key: 'KEY2',
    errContains: 'unexpected content after closing quote',
  },
  {
    name: 'empty quotes preserve literal content',
    content: `KEY1=''
KEY2='   '
KEY3='bar'
`,
    key: 'KEY1',
    want: ``,
  },
  {
    name: 'quotes preserve all literal content including spaces',
    content: `KEY1='  foo  bar  '
KEY2='bar'
`,
    key: 'KEY1',
    want: `  foo  bar  `,
  },
  {
    name: 'special characters in value',
    content: `KEY1='!@#$%^&*()_+-=[]{}|;:,.<>?/'
KEY2='bar'
`,
    key: 'KEY1',
    want: `!@#$%^&*()_+-=[]{}|;:,.<>?/`,
  },
  {
    name: 'newlines and tabs in value',
    content: `KEY1='line1\\nline2\\tline3'
KEY2='bar'
`,
    key: 'KEY1',
    want: `line1\\nline2\\tline3`,
  },
  {
    name: 'unicode characters in value',
    content: `KEY1='中文 Español Français 🌍'
KEY2='bar'
`,
    key: 'KEY1',
    want: `中文 Español Français 🌍`,
  },
  {
    name: 'backslashes in value',
    content: `KEY1='path\\\\to\\\\file'
KEY2='bar'
`,
    key: 'KEY1',
    want: `path\\\\to\\\\file`,
  },
  {
    name: 'single quotes within value quotes',
    content: `KEY1='value with \\'nested\\' quotes'
KEY2='bar'
`,
    key: 'KEY1',
    errContains: 'unexpected content after closing quote',
  },
  {
    name: 'double quotes within value quotes',
    content: `KEY1='value with "nested" quotes'
KEY2='bar'
`,
    key: 'KEY1',
    want: `value with "nested" quotes`,
  },
  {
    name: 'empty single quotes',
    content: `KEY1=''
KEY2=''
KEY3='bar'
`,
    key: 'KEY2',
    want: ``,
  },
  {
    name: 'only whitespace in quotes',
    content: `KEY1='   '
KEY2='\\t\\n'
KEY3='bar'
`,
    key: 'KEY1',
    want: '   ',
  },
  {
    name: 'complex JSON-like value',
    content: `KEY1='{"name": "test", "value": 123, "nested": {"key": "val"}}'
KEY2='bar'
`,
    key: 'KEY1',
    want: `{"name": "test", "value": 123, "nested": {"key": "val"}}`,
  },
  {
    name: 'URL with special characters',
    content: `KEY1='https://example.com/path?query=value&another=param'
KEY2='bar'
`,
    key: 'KEY1',
    want: `https://example.com/path?query=value&another=param`,
  },
  {
    name: 'XML-like content',
    content: `KEY1='<root><element attr="value">content</element></root>'
KEY2='bar'
`,
    key: 'KEY1',
    want: `<root><element attr="value">content</element></root>`,
  },
  {
    name: 'base64 encoded data',
    content: `KEY1='SGVsbG8gV29ybGQh'
KEY2='bar'
`,
    key: 'KEY1',
    want: `SGVsbG8gV29ybGQh`,
  },
  {
    name: 'regex pattern',
    content: `KEY1='^[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\\\\.[a-zA-Z]{2,}$'
KEY2='bar'
`,
    key: 'KEY1',
    want: `^[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\\\\.[a-zA-Z]{2,}$`,
  },
  {
    name: 'multi-line value with spaces',
    content: `KEY1='line one
  line two with spaces
    line three with more spaces'
KEY2='bar'
`,
    key: 'KEY1',
    want: `line one
  line two with spaces
    line three with more spaces`,
  },
  {
    name: 'multi-line value with special characters',
    content: `KEY1='line1: !@#$%^&*()
line2: []{}|;:,.<>?/
line3: \\\\\\\\tabs\\\\nnewlines'
KEY2='bar'
`,
    key: 'KEY1',
    want: `line1: !@#$%^&*()
line2: []{}|;:,.<>?/
line3: \\\\\\\\tabs\\\\nnewlines`,
  },
  {
    name: 'multi-line value with mixed content',
    content: `KEY1='First line
Second line with $VAR and \${HOME}
Third line with spaces    and    tabs\\\\t
Fourth line with special chars: !@#$%^&*()_+'
KEY2='bar'
`,
    key: 'KEY1',
    want: `First line
Second line with $VAR and \${HOME}
Third line with spaces    and    tabs\\\\t
Fourth line with special chars: !@#$%^&*()_+`,
  },
  {
    name: 'multi-line value with empty lines',
    content: `KEY1='line1

line3 after empty line

line5 after another empty'
KEY2='bar'
`,
    key: 'KEY1',
    want: `line1

line3 after empty line

line5 after another empty`,
  },
  {
    name: 'multi-line value with trailing spaces',
    content: `KEY1='line1
line2 with trailing spaces
line3   '
KEY2='bar'
`,
    key: 'KEY1',
    want: `line1
line2 with trailing spaces
line3   `,
  },
  {
    name: 'multi-line value with unicode characters',
    content: `KEY1='中文 第一行
English second line
Français troisième ligne 🌍
Русский четвертая строка'
KEY2='bar'
`,
    key: 'KEY1',
    want: `中文 第一行
English second line
Français troisième ligne 🌍
Русский четвертая строка`,
  },
  {
    name: 'multi-line value with code-like content',
    content: `KEY1='func main() {
    fmt.Println(\\"Hello, World!\\")
    for i := 0; i < 10; i++ {
        fmt.Printf(\\"i=%d\\\\n\\", i)
    }
}'
KEY2='bar'
`,
    key: 'KEY1',
    want: `func main() {
    fmt.Println(\\"Hello, World!\\")
    for i := 0; i < 10; i++ {
        fmt.Printf(\\"i=%d\\\\n\\", i)
    }
}`,
  },
  {
    name: 'multi-line value with JSON content',
    content: `KEY1='{
  "name": "test",
  "value": 123,
  "nested": {
    "key": "val",
    "array": [1, 2, 3]
  }
}'
KEY2='bar'
`,
    key: 'KEY1',
    want: `{
  "name": "test",
  "value": 123,
  "nested": {
    "key": "val",
    "array": [1, 2, 3]
  }
}`,
  },
  {
    name: 'multi-line value with YAML content',
    content: `KEY1='name: test
value: 123
nested:
  key: val
  array:
    - 1
    - 2
    - 3'
KEY2='bar'
`,
    key: 'KEY1',
    want: `name: test
value: 123
nested:
  key: val
  array:
    - 1
    - 2
    - 3`,
  },
  {
    name: 'multi-line value with Cert',
    content: `KEY1='-----BEGIN OPENSSH PRIVATE KEY-----
b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQSSSSSSSSSSSSSBlwAAAAdzc2gtcn
NhAAAAAwEAAQAAAYEAyUgx65kBQf/Nl+EcOFkP8q7n7FDetNrH7WYAnpYnaWG8w4rA9ht9
upttTNyRbCVpb32f5m8DFvVug0vAa/ksX8iSKzD53bWTuTQiN/i9Q/iG0eCNPR0KoW/gLV
SS9pIWWVYNav6dBjknR85202+YryJkn8THAf8Kg5Lwl0dom41dZvN1DirbcqWOU1BKG2sl
pFIq8BdXedRjwoNYngMvLBOb4CAfvQyKr1+ARQecqzPn4pTovYtIZRasIgrBOpSpHGZa70
pTAVP5+KGXN5DigjQUWaje1AiEx5zk8J3T5AA0abSaNn0uE53tjgalTzcY9kxHdo2rgHJC
huHhWsWslkcntkKp0V1Jc8oGv86Dp5mPhpfpMOK+vCe2TrS/saes9fNVxjorSpLl4xTU/V
-----END OPENSSH PRIVATE KEY-----'
KEY2='bar'
`,
    key: 'KEY1',
    want: `-----BEGIN OPENSSH PRIVATE KEY-----
b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQSSSSSSSSSSSSSBlwAAAAdzc2gtcn
NhAAAAAwEAAQAAAYEAyUgx65kBQf/Nl+EcOFkP8q7n7FDetNrH7WYAnpYnaWG8w4rA9ht9
upttTNyRbCVpb32f5m8DFvVug0vAa/ksX8iSKzD53bWTuTQiN/i9Q/iG0eCNPR0KoW/gLV
SS9pIWWVYNav6dBjknR85202+YryJkn8THAf8Kg5Lwl0dom41dZvN1DirbcqWOU1BKG2sl
pFIq8BdXedRjwoNYngMvLBOb4CAfvQyKr1+ARQecqzPn4pTovYtIZRasIgrBOpSpHGZa70
pTAVP5+KGXN5DigjQUWaje1AiEx5zk8J3T5AA0abSaNn0uE53tjgalTzcY9kxHdo2rgHJC
huHhWsWslkcntkKp0V1Jc8oGv86Dp5mPhpfpMOK+vCe2TrS/saes9fNVxjorSpLl4xTU/V
-----END OPENSSH PRIVATE KEY-----`,
  },
];

/** What bash --posix makes of the file, as upstream's testShellBehavior: valid files must agree. */
function shell(content: string, key: string): string | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'envfile-'));
  try {
    writeFileSync(join(dir, 'env'), content);
    const r = spawnSync('bash', ['--posix', '-c', `set -a && . "${dir}/env" && printf '%s' "\${${key}}"`], { encoding: 'utf8' });
    return r.status === 0 ? r.stdout : undefined;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('ParseEnv: upstream table, valid files read as bash --posix reads them', async () => {
  const bash = existsSync('/bin/bash') || existsSync('/usr/bin/bash');
  for (const c of upstream) {
    const r = await parseEnvContent(c.content, c.key);
    if (c.errContains !== undefined) {
      assert.ok('error' in r, `${c.name}: want an error, got ${JSON.stringify(r)}`);
      assert.ok(r.error.includes(c.errContains), `${c.name}: ${r.error}`);
      continue;
    }
    assert.deepEqual(r, { value: c.want }, c.name);
    if (bash) assert.equal(shell(c.content, c.key), c.want, `${c.name}: bash`);
  }
});

test('ParseEnv: error texts, line numbers, what stops before the key and what does not', async () => {
  const cases: [string, string, string | { error: string }][] = [
    ["A='1'\nnope\n", 'A', '1'], // the key is found before the bad line: no error
    ["nope\nA='1'\n", 'A', { error: "invalid environment variable format at line 1: missing '='" }],
    ["\n\n='x'\n", 'A', { error: 'invalid environment variable format at line 3: empty variable name' }],
    ["A\t='x'\n", 'A', { error: "invalid environment variable format at line 1: whitespace before '=' is not allowed" }],
    ['A=\n', 'A', { error: 'invalid environment variable format at line 1: value must be enclosed in single quotes' }],
    ["A= 'x'\n", 'A', ''],
    ['A=  \n', 'A', ''],
    ["B= 'x'\nA='y'\n", 'A', 'y'],
    ["A='1'\nA='2'\n", 'A', '1'],
    ["A='x\ny\nz' # done\n", 'A', 'x\ny\nz'],
    ["A='x\n\ty'\tjunk\n", 'A', { error: 'invalid environment variable format at line 2: unexpected content after closing quote' }],
    ["B='x\n\nA='y'\n", 'A', { error: 'invalid environment variable format at line 3: unexpected content after closing quote' }],
    ["B='x\n", 'A', { error: 'invalid environment variable format starting at line 1: unclosed single quote' }],
    ["A='x\n", 'A', { error: 'invalid environment variable format starting at line 1: unclosed single quote' }],
    // bufio.ScanLines: \r\n ends a line, a lone \r does not; no newline at the end is fine.
    ["A='x'\r\nB='y'\r\n", 'B', 'y'],
    ["A='x\r\ny'\r\n", 'A', 'x\ny'],
    ["A='x\ry'", 'A', 'x\ry'],
    ['', 'A', ''],
    ["   \t\n  # c\nA='1'", 'A', '1'],
    ["A='#'#", 'A', '#'],
    ["A=''", 'A', ''],
    ["A B='x'\n", 'A B', 'x'],
  ];
  for (const [content, key, want] of cases) {
    assert.deepEqual(await parseEnvContent(content, key), typeof want === 'string' ? { value: want } : want, JSON.stringify(content));
  }
});

test('scanLines: bufio.Scanner lines across chunks; a line of 64 KiB or more stops the scan', async () => {
  const all = async (chunks: Uint8Array[]) => {
    const out = [];
    for await (const l of scanLines(chunks)) out.push(l);
    return out;
  };
  const b = (s: string) => Buffer.from(s);
  assert.deepEqual(await all([b('a'), b('b\nc'), b('\r'), b('\n\n'), b('d')]), ['ab', 'c', '', 'd']);
  assert.deepEqual(await all([b('x\n')]), ['x']);
  assert.deepEqual(await all([]), []);
  // Multi-byte characters split across chunks stay whole.
  const euro = b('€\n');
  assert.deepEqual(await all([euro.subarray(0, 1), euro.subarray(1)]), ['€']);
  const tooLong = { readError: 'bufio.Scanner: token too long' };
  const long = 'x'.repeat(MAX_LINE_BYTES - 1);
  assert.deepEqual(await all([b(`${long}\nok\n`)]), [long, 'ok']);
  assert.deepEqual(await all([b(`${long}x\nok\n`)]), [tooLong]);
  assert.deepEqual(await all([b('a\n'), b(`${long}x`)]), ['a', tooLong]);
  const failing = (async function* () {
    yield b('a\nb');
    throw new Error('read /v/f: is a directory');
  })();
  const out = [];
  for await (const l of scanLines(failing)) out.push(l);
  assert.deepEqual(out, ['a', { readError: 'read /v/f: is a directory' }]);
});

test('ParseEnv: a read error is reported unless a quote is open (then the quote is)', async () => {
  const lines = (items: (string | { readError: string })[]) => items;
  assert.deepEqual(await parseEnv(lines(["A='1'", { readError: 'bufio.Scanner: token too long' }]), 'B', '/v/f'), {
    error: 'error reading environment variable file "/v/f": bufio.Scanner: token too long',
  });
  assert.deepEqual(await parseEnv(lines(["B='1'", { readError: 'x' }]), 'B', '/v/f'), { value: '1' });
  assert.deepEqual(await parseEnv(lines(["B='1", { readError: 'x' }]), 'B', '/v/f'), {
    error: 'invalid environment variable format starting at line 1: unclosed single quote',
  });
  // Stops reading at the key.
  let pulled = 0;
  const source = (function* () {
    for (const l of ["A='1'", "B='2'", "C='3'"]) {
      pulled++;
      yield l;
    }
  })();
  assert.deepEqual(await parseEnv(source, 'B', '/v/f'), { value: '2' });
  assert.equal(pulled, 2);
});

test('fileKeyRefOf: only where makeEnvironmentVariables reaches the FileKeyRef case', () => {
  const ref = { volumeName: 'cfg', path: 'a.env', key: 'K' };
  const env = (e: Omit<EnvVar, 'valueFrom'> & { valueFrom?: Record<string, unknown> }) => e as EnvVar;
  assert.deepEqual(fileKeyRefOf(env({ name: 'A', valueFrom: { fileKeyRef: ref } })), ref);
  assert.equal(fileKeyRefOf(env({ name: 'A', value: 'lit', valueFrom: { fileKeyRef: ref } })), undefined);
  assert.equal(fileKeyRefOf(env({ name: 'A', valueFrom: { fieldRef: { fieldPath: 'metadata.name' }, fileKeyRef: ref } })), undefined);
  assert.equal(fileKeyRefOf(env({ name: 'A', valueFrom: { secretKeyRef: { name: 's', key: 'k' }, fileKeyRef: ref } })), undefined);
  assert.equal(fileKeyRefOf(env({ name: 'A' })), undefined);
  const c = { name: 'c', env: [env({ name: 'A', valueFrom: { fileKeyRef: ref } }), env({ name: 'B', value: 'b' })] } as Container;
  assert.deepEqual(fileKeyRefs(c), [ref]);
  assert.notEqual(fileKeyId(ref), fileKeyId({ ...ref, key: 'L' }));
  assert.equal(fileKeyId(ref), fileKeyId({ ...ref, optional: true }));
});
