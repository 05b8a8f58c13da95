// makeIPTablesUtilChains (true by default): the iptables chains upstream's kubelet still makes in
// v1.36 for the benefit of other components (kubelet_network_linux.go initNetworkUtil and
// syncIPTablesRules): the KUBE-IPTABLES-HINT chain in mangle, whose presence in iptables-legacy or
// iptables-nft tells kube-proxy and CNI plugins which one the node uses, and for IPv4 the
// KUBE-FIREWALL chain, jumped to first from INPUT and OUTPUT, that drops connections to 127/8 from
// outside it (kube-proxy's route_localnet hole, kubernetes#90259). A KUBE-KUBELET-CANARY chain in
// mangle, nat and filter tells an iptables flush, after which all of it is made again (upstream's
// Monitor, each minute).
import { runCommand } from './command.ts';
import type { Logger } from '../log/log.ts';

export type IPFamily = 'IPv4' | 'IPv6';
export const HINT_CHAIN = 'KUBE-IPTABLES-HINT';
export const FIREWALL_CHAIN = 'KUBE-FIREWALL';
export const CANARY_CHAIN = 'KUBE-KUBELET-CANARY';
export const CANARY_TABLES = ['mangle', 'nat', 'filter'] as const;

/** One thing to make sure of, as upstream's iptables Interface: a chain, or a rule at the head or tail of a chain. */
export type Step = { table: string; chain: string } | { table: string; chain: string; position: 'prepend' | 'append'; rule: string[] };

/** Pure: what syncIPTablesRules makes, in its order. IPv6 has no 127/8 hole: the hint chain only. */
export function utilChainSteps(family: IPFamily): Step[] {
  const hint: Step = { table: 'mangle', chain: HINT_CHAIN };
  if (family === 'IPv6') return [hint];
  return [
    hint,
    { table: 'filter', chain: FIREWALL_CHAIN },
    { table: 'filter', chain: 'OUTPUT', position: 'prepend', rule: ['-j', FIREWALL_CHAIN] },
    { table: 'filter', chain: 'INPUT', position: 'prepend', rule: ['-j', FIREWALL_CHAIN] },
    {
      table: 'filter',
      chain: FIREWALL_CHAIN,
      position: 'append',
      rule: [
        '-m',
        'comment',
        '--comment',
        'block incoming localnet connections',
        '--dst',
        '127.0.0.0/8',
        '!',
        '--src',
        '127.0.0.0/8',
        '-m',
        'conntrack',
        '!',
        '--ctstate',
        'RELATED,ESTABLISHED,DNAT',
        '-j',
        'DROP',
      ],
    },
  ];
}

/**
 * Pure: the iptables arguments of a step, as upstream's EnsureChain and EnsureRule run them:
 * `-N` (exit 1 means it exists already), or `-C` and, when that fails, `-I` (at the head) or `-A`.
 */
export function stepCommands(s: Step): { check?: string[]; apply: string[] } {
  if (!('rule' in s)) return { apply: ['-N', s.chain, '-t', s.table] };
  const rest = [s.chain, '-t', s.table, ...s.rule];
  return { check: ['-C', ...rest], apply: [s.position === 'prepend' ? '-I' : '-A', ...rest] };
}

export type Run = (family: IPFamily, args: string[]) => Promise<{ status: number | null; stderr: string; error?: Error }>;

// Not spawnSync: `-w 5` waits up to 5 s for the xtables lock, and the event loop would wait with it.
const run: Run = (family, args) => runCommand(family === 'IPv4' ? 'iptables' : 'ip6tables', ['-w', '5', ...args]);

/** Makes sure of the steps; undefined when all hold, else what failed. */
export async function ensureSteps(family: IPFamily, steps: Step[], exec: Run = run): Promise<string | undefined> {
  for (const s of steps) {
    const c = stepCommands(s);
    if (c.check && (await exec(family, c.check)).status === 0) continue;
    const r = await exec(family, c.apply);
    if (r.status === 0 || (!c.check && r.status === 1)) continue;
    return `iptables ${c.apply.join(' ')}: ${r.error?.message ?? r.stderr.trim()}`;
  }
  return undefined;
}

/**
 * Starts upstream's initNetworkUtil for each family iptables works for: the chains now (ready),
 * then each minute the canary checked and, once a flush took it, everything made again. tick:
 * one check now (the timer's; tests call it); a tick while one runs does nothing.
 */
export function startUtilChains(
  log: Logger,
  exec: Run = run,
  intervalMs = 60_000,
): { ready: Promise<void>; tick(): Promise<void>; stop(): void } {
  const canaries = CANARY_TABLES.map((table) => ({ table, chain: CANARY_CHAIN }));
  const sync = async (family: IPFamily) => {
    const err = await ensureSteps(family, utilChainSteps(family), exec);
    if (err) log.info('Failed to initialize iptables rules; some functionality may be missing.', { protocol: family, err });
    return !err;
  };
  const watched: IPFamily[] = [];
  const canaryUp = new Map<IPFamily, boolean>();
  let busy = false;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const tick = async () => {
    if (busy) return;
    busy = true;
    try {
      for (const f of watched) {
        if (!canaryUp.get(f)) {
          canaryUp.set(f, (await ensureSteps(f, canaries, exec)) === undefined);
          continue;
        }
        if ((await exec(f, ['-L', CANARY_CHAIN, '-t', 'mangle', '-n'])).status === 0) continue;
        log.info('Reloading after iptables flush', { protocol: f });
        await sync(f);
        canaryUp.set(f, (await ensureSteps(f, canaries, exec)) === undefined);
      }
    } finally {
      busy = false;
    }
  };
  const ready = (async () => {
    const families: IPFamily[] = [];
    for (const f of ['IPv4', 'IPv6'] as const) if ((await exec(f, ['--version'])).status === 0) families.push(f);
    if (!families.length) {
      // Not an error, as upstream: the rules serve other components, and a host without iptables has none using them.
      log.info('No iptables support on this system; not creating the KUBE-IPTABLES-HINT chain');
      return;
    }
    for (const f of families) {
      if (!(await sync(f))) continue;
      log.info('Initialized iptables rules.', { protocol: f });
      watched.push(f);
    }
    await tick();
    if (stopped) return;
    timer = setInterval(() => void tick(), intervalMs);
    timer.unref();
  })();
  return {
    ready,
    tick,
    stop: () => {
      stopped = true;
      clearInterval(timer);
    },
  };
}
