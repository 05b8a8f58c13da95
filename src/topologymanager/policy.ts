// The topology manager's hint merge (upstream's topologymanager policy.go, policy_best_effort.go,
// policy_restricted.go, policy_single_numa_node.go, policy_options.go, numa_info.go): every
// combination of the providers' hints is merged (their NUMA nodes AND-ed, preferred only if all
// are preferred and agree), and the best merged hint wins; the policy then admits or refuses.
// Pure: the manager (manager.ts) asks the providers and keeps the chosen hints.
import { NUMAMask, type ProviderHints, type TopologyHint } from './bitmask.ts';

export const POLICY_NONE = 'none';
export const POLICY_BEST_EFFORT = 'best-effort';
export const POLICY_RESTRICTED = 'restricted';
export const POLICY_SINGLE_NUMA_NODE = 'single-numa-node';
export const PREFER_CLOSEST_NUMA_NODES = 'prefer-closest-numa-nodes';
export const MAX_ALLOWABLE_NUMA_NODES = 'max-allowable-numa-nodes';
/** defaultMaxAllowableNUMANodes. */
export const DEFAULT_MAX_ALLOWABLE_NUMA_NODES = 8;

export interface PolicyOptions {
  preferClosestNUMA: boolean;
  maxAllowableNUMANodes: number;
}

/** NewPolicyOptions: both options are GA; anything else is refused with upstream's text. */
export function policyOptions(given: Record<string, string>, warn: (msg: string) => void = () => {}): PolicyOptions {
  const o: PolicyOptions = { preferClosestNUMA: false, maxAllowableNUMANodes: DEFAULT_MAX_ALLOWABLE_NUMA_NODES };
  for (const [name, value] of Object.entries(given)) {
    if (name === PREFER_CLOSEST_NUMA_NODES) {
      const v = parseGoBool(value);
      if (v === undefined)
        throw new Error(`bad value for option "${name}": strconv.ParseBool: parsing ${JSON.stringify(value)}: invalid syntax`);
      o.preferClosestNUMA = v;
    } else if (name === MAX_ALLOWABLE_NUMA_NODES) {
      if (!/^[+-]?\d+$/.test(value))
        throw new Error(
          `unable to convert policy option to integer "${name}": strconv.Atoi: parsing ${JSON.stringify(value)}: invalid syntax`,
        );
      const v = Number(value);
      if (v < DEFAULT_MAX_ALLOWABLE_NUMA_NODES)
        throw new Error(`the minimum value of "${name}" should not be less than ${DEFAULT_MAX_ALLOWABLE_NUMA_NODES}`);
      if (v > DEFAULT_MAX_ALLOWABLE_NUMA_NODES)
        warn('WARNING: the value of max-allowable-numa-nodes is more than the default recommended value');
      o.maxAllowableNUMANodes = v;
    } else throw new Error(`unknown Topology Manager Policy option: "${name}"`);
  }
  return o;
}

function parseGoBool(v: string): boolean | undefined {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(v)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(v)) return false;
  return undefined;
}

/** NUMAInfo: the node ids and, with prefer-closest-numa-nodes, their distances (node -> distance to each node by id). */
export interface NUMAInfo {
  nodes: number[];
  distances: Map<number, number[]>;
}

const defaultMask = (n: NUMAInfo) => NUMAMask.of(...n.nodes);

/** NUMADistances.CalculateAverageFor. */
function averageDistance(n: NUMAInfo, m: NUMAMask): number {
  const bits = m.list();
  if (bits.length === 0) return 0;
  let sum = 0;
  for (const a of bits) for (const b of bits) sum += n.distances.get(a)?.[b] ?? 0;
  return sum / (bits.length * bits.length);
}

const narrowest = (a: NUMAMask, b: NUMAMask) => (a.isNarrowerThan(b) ? a : b);

/** NUMAInfo.Closest: the narrower, or of equal count the lower average distance, then the lower mask. */
function closest(n: NUMAInfo, a: NUMAMask, b: NUMAMask): NUMAMask {
  if (a.count() !== b.count()) return narrowest(a, b);
  const da = averageDistance(n, a);
  const db = averageDistance(n, b);
  if (da === db) return a.isLessThan(b) ? a : b;
  return da < db ? a : b;
}

/** filterProvidersHints: one list per provider and resource; no hints is "any" (preferred), an empty list "none possible". */
export function filterProvidersHints(providers: ProviderHints[]): TopologyHint[][] {
  const out: TopologyHint[][] = [];
  for (const hints of providers) {
    if (!hints || Object.keys(hints).length === 0) {
      out.push([{ preferred: true }]);
      continue;
    }
    for (const r of Object.keys(hints)) {
      const h = hints[r];
      if (h === undefined) out.push([{ preferred: true }]);
      else if (h.length === 0) out.push([{ preferred: false }]);
      else out.push(h);
    }
  }
  return out;
}

/** mergePermutation. */
function mergePermutation(dflt: NUMAMask, perm: TopologyHint[]): TopologyHint {
  let preferred = true;
  const masks: NUMAMask[] = [];
  for (const h of perm) {
    if (h.affinity) {
      masks.push(h.affinity);
      if (!h.affinity.isEqual(masks[0]!)) preferred = false;
    }
    if (!h.preferred) preferred = false;
  }
  return { affinity: dflt.and(...masks), preferred };
}

/** maxOfMinAffinityCounts: over the resources, the largest of their narrowest hints' node counts. */
function maxOfMinAffinityCounts(hints: TopologyHint[][]): number {
  let max = 0;
  for (const rh of hints) {
    let narrow: NUMAMask | undefined;
    for (const h of rh) if (h.affinity && (!narrow || h.affinity.isNarrowerThan(narrow))) narrow = h.affinity;
    if (narrow && narrow.count() > max) max = narrow.count();
  }
  return max;
}

/** HintMerger.Merge: the best merged hint over every permutation; none at all: the default mask, not preferred. */
export function mergeHints(numa: NUMAInfo, hints: TopologyHint[][], policyName: string, opts: PolicyOptions): TopologyHint {
  const dflt = defaultMask(numa);
  const bestCount = maxOfMinAffinityCounts(hints);
  const compareMasks = (current: TopologyHint, candidate: TopologyHint): TopologyHint => {
    if (candidate.affinity!.isEqual(current.affinity!)) return current;
    const best =
      policyName !== POLICY_SINGLE_NUMA_NODE && opts.preferClosestNUMA
        ? closest(numa, current.affinity!, candidate.affinity!)
        : narrowest(current.affinity!, candidate.affinity!);
    return best.isEqual(current.affinity!) ? current : candidate;
  };
  const compare = (current: TopologyHint | undefined, candidate: TopologyHint): TopologyHint | undefined => {
    const cand = candidate.affinity!.count();
    if (cand === 0) return current;
    if (!current) return candidate;
    if (!current.preferred && candidate.preferred) return candidate;
    if (current.preferred && !candidate.preferred) return current;
    if (current.preferred && candidate.preferred) return compareMasks(current, candidate);
    // Neither preferred: the hint closest to the widest of the narrowest per-resource hints.
    const cur = current.affinity!.count();
    if (cur > bestCount) return compareMasks(current, candidate);
    if (cur === bestCount) return cand !== bestCount ? current : compareMasks(current, candidate);
    if (cand > bestCount) return current;
    if (cand === bestCount) return candidate;
    if (cand > cur) return candidate;
    if (cand < cur) return current;
    return compareMasks(current, candidate);
  };
  let best: TopologyHint | undefined;
  const iterate = (i: number, acc: TopologyHint[]) => {
    if (i === hints.length) {
      best = compare(best, mergePermutation(dflt, acc));
      return;
    }
    for (const h of hints[i]!) iterate(i + 1, [...acc, h]);
  };
  iterate(0, []);
  return best ?? { affinity: dflt, preferred: false };
}

/** filterSingleNumaHints: only preferred hints of no preference or of one node. */
const singleNumaHints = (hints: TopologyHint[][]) =>
  hints.map((rh) => rh.filter((h) => h.preferred && (!h.affinity || h.affinity.count() === 1)));

/**
 * Policy.Merge for best-effort (always admits), restricted (admits a preferred hint only) and
 * single-numa-node (single-node hints only; the default mask comes back as no preference).
 */
export function merge(
  policyName: string,
  numa: NUMAInfo,
  opts: PolicyOptions,
  providers: ProviderHints[],
): { hint: TopologyHint; admit: boolean } {
  const filtered = filterProvidersHints(providers);
  if (policyName === POLICY_SINGLE_NUMA_NODE) {
    let hint = mergeHints(numa, singleNumaHints(filtered), policyName, opts);
    if (hint.affinity?.isEqual(defaultMask(numa))) hint = { preferred: hint.preferred };
    return { hint, admit: hint.preferred };
  }
  const hint = mergeHints(numa, filtered, policyName, opts);
  return { hint, admit: policyName === POLICY_BEST_EFFORT ? true : hint.preferred };
}
