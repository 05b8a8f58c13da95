import { test } from 'node:test';
import assert from 'node:assert/strict';
import { logger } from '../log/log.ts';
import {
  CANARY_CHAIN,
  FIREWALL_CHAIN,
  HINT_CHAIN,
  ensureSteps,
  startUtilChains,
  stepCommands,
  utilChainSteps,
  type IPFamily,
  type Run,
} from './iptables-util.ts';

test('utilChainSteps: the hint chain for both families, the KUBE-FIREWALL chain, jumps and 127/8 rule for IPv4 only (syncIPTablesRules)', () => {
  assert.deepEqual(utilChainSteps('IPv6'), [{ table: 'mangle', chain: HINT_CHAIN }]);
  const v4 = utilChainSteps('IPv4');
  assert.deepEqual(
    v4.map((s) => ['rule' in s ? s.position : 'chain', s.table, s.chain]),
    [
      ['chain', 'mangle', HINT_CHAIN],
      ['chain', 'filter', FIREWALL_CHAIN],
      ['prepend', 'filter', 'OUTPUT'],
      ['prepend', 'filter', 'INPUT'],
      ['append', 'filter', FIREWALL_CHAIN],
    ],
  );
  assert.deepEqual(
    stepCommands(v4[4]!).apply.join(' '),
    `-A ${FIREWALL_CHAIN} -t filter -m comment --comment block incoming localnet connections --dst 127.0.0.0/8 ! --src 127.0.0.0/8 -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP`,
  );
});

test('stepCommands: -N for a chain; -C then -I (head) or -A (tail) for a rule', () => {
  const rows: [Parameters<typeof stepCommands>[0], ReturnType<typeof stepCommands>][] = [
    [{ table: 'mangle', chain: 'X' }, { apply: ['-N', 'X', '-t', 'mangle'] }],
    [
      { table: 'filter', chain: 'INPUT', position: 'prepend', rule: ['-j', 'X'] },
      { check: ['-C', 'INPUT', '-t', 'filter', '-j', 'X'], apply: ['-I', 'INPUT', '-t', 'filter', '-j', 'X'] },
    ],
    [
      { table: 'filter', chain: 'X', position: 'append', rule: ['-j', 'DROP'] },
      { check: ['-C', 'X', '-t', 'filter', '-j', 'DROP'], apply: ['-A', 'X', '-t', 'filter', '-j', 'DROP'] },
    ],
  ];
  for (const [step, want] of rows) assert.deepEqual(stepCommands(step), want);
});

/** An in-memory iptables: chains per family and table, with their rules; -N of an existing chain exits 1, as iptables does. */
function fakeIptables(families: IPFamily[] = ['IPv4', 'IPv6']) {
  const chains = new Map<string, string[]>();
  const calls: string[] = [];
  const key = (f: IPFamily, table: string, chain: string) => `${f}/${table}/${chain}`;
  const run: Run = async (f, args) => {
    calls.push(`${f} ${args.join(' ')}`);
    if (!families.includes(f)) return { status: null, stderr: '', error: new Error('ENOENT') };
    const [op, chain, , table, ...rule] = args;
    const k = key(f, table ?? '', chain ?? '');
    const builtin = ['INPUT', 'OUTPUT'].includes(chain!);
    const exists = builtin || chains.has(k);
    const ok = { status: 0, stderr: '' };
    switch (op) {
      case '--version':
        return ok;
      case '-N':
        if (exists) return { status: 1, stderr: 'Chain already exists.' };
        chains.set(k, []);
        return ok;
      case '-L':
        return exists ? ok : { status: 1, stderr: 'No chain/target/match by that name.' };
      case '-C':
        return (chains.get(k) ?? []).includes(rule.join(' ')) ? ok : { status: 1, stderr: 'Bad rule' };
      case '-I':
      case '-A':
        if (!exists) return { status: 1, stderr: `Couldn't load target` };
        chains.set(k, [...(chains.get(k) ?? []), rule.join(' ')]);
        return ok;
    }
    return { status: 2, stderr: `unknown ${op}` };
  };
  return { run, chains, calls, flush: () => chains.clear() };
}

test('ensureSteps: an existing chain or rule is kept, a missing one made, a failure named', async () => {
  const ipt = fakeIptables();
  assert.equal(await ensureSteps('IPv4', utilChainSteps('IPv4'), ipt.run), undefined);
  assert.deepEqual(ipt.chains.get(`IPv4/filter/INPUT`), [`-j ${FIREWALL_CHAIN}`]);
  const made = ipt.calls.length;
  assert.equal(await ensureSteps('IPv4', utilChainSteps('IPv4'), ipt.run), undefined, 'again: nothing to do');
  assert.ok(
    ipt.calls.slice(made).every((c) => /^IPv4 -[NC] /.test(c)),
    'only checks and -N the second time',
  );
  assert.deepEqual(ipt.chains.get(`IPv4/filter/INPUT`), [`-j ${FIREWALL_CHAIN}`], 'no second jump');
  const failing: Run = async (f, args) =>
    args[0] === '-N'
      ? { status: 4, stderr: 'iptables v1.8.9 (nf_tables): Could not fetch rule set generation id: Permission denied (you must be root)\n' }
      : ipt.run(f, args);
  assert.match(
    (await ensureSteps('IPv4', utilChainSteps('IPv4'), failing)) ?? '',
    /^iptables -N KUBE-IPTABLES-HINT -t mangle: .*Permission denied/,
  );
});

test('startUtilChains: both families at start, the canaries next, everything again once a flush took them (upstream Monitor)', async () => {
  const ipt = fakeIptables();
  const util = startUtilChains(logger('test'), ipt.run, 1e9);
  try {
    await util.ready;
    for (const f of ['IPv4', 'IPv6'] as const) {
      assert.ok(ipt.chains.has(`${f}/mangle/${HINT_CHAIN}`), f);
      for (const t of ['mangle', 'nat', 'filter']) assert.ok(ipt.chains.has(`${f}/${t}/${CANARY_CHAIN}`), `${f} canary in ${t}`);
    }
    assert.ok(!ipt.chains.has(`IPv6/filter/${FIREWALL_CHAIN}`), 'no KUBE-FIREWALL for IPv6');
    await util.tick();
    const quiet = ipt.calls.length;
    await util.tick();
    assert.deepEqual(
      ipt.calls.slice(quiet),
      [`IPv4 -L ${CANARY_CHAIN} -t mangle -n`, `IPv6 -L ${CANARY_CHAIN} -t mangle -n`],
      'a canary check only',
    );
    ipt.flush();
    await util.tick();
    assert.ok(
      ipt.chains.has(`IPv4/filter/${FIREWALL_CHAIN}`) && ipt.chains.has(`IPv4/mangle/${CANARY_CHAIN}`),
      'made again after the flush',
    );
  } finally {
    util.stop();
  }
});

test('startUtilChains: no iptables, nothing made and no error (upstream: only an info line)', async () => {
  const ipt = fakeIptables([]);
  const util = startUtilChains(logger('test'), ipt.run, 1e9);
  await util.ready;
  util.stop();
  assert.deepEqual(ipt.calls, ['IPv4 --version', 'IPv6 --version']);
});
