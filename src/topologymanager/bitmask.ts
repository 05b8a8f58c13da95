// A set of NUMA nodes as upstream's bitmask.BitMask (a uint64 with bit i for node i): the order
// of two masks of equal count is the order of their integer values, which the hint merge and the
// memory manager's best hint depend on.

export class NUMAMask {
  readonly bits: bigint;
  private constructor(bits: bigint) {
    this.bits = bits;
  }

  /** NewBitMask; ids must be 0..63 as upstream's. */
  static of(...ids: number[]): NUMAMask {
    let b = 0n;
    for (const id of ids) {
      if (id < 0 || id >= 64) throw new Error(`bit number must be less than 64`);
      b |= 1n << BigInt(id);
    }
    return new NUMAMask(b);
  }

  /** GetBits: the node ids, ascending. */
  list(): number[] {
    const out: number[] = [];
    for (let i = 0; i < 64; i++) if (this.bits & (1n << BigInt(i))) out.push(i);
    return out;
  }

  count(): number {
    return this.list().length;
  }

  isEqual(o: NUMAMask): boolean {
    return this.bits === o.bits;
  }

  isLessThan(o: NUMAMask): boolean {
    return this.bits < o.bits;
  }

  /** IsNarrowerThan: fewer nodes, or as many and a lower value. */
  isNarrowerThan(o: NUMAMask): boolean {
    const a = this.count();
    const b = o.count();
    return a === b ? this.isLessThan(o) : a < b;
  }

  /** And: the nodes in every mask. */
  and(...others: NUMAMask[]): NUMAMask {
    return new NUMAMask(others.reduce((b, o) => b & o.bits, this.bits));
  }

  toString(): string {
    return this.list().join(',');
  }
}

/** IterateBitMasks: every non-empty subset of ids, by size then in the ids' order. */
export function everyMask(ids: number[], f: (m: NUMAMask) => void): void {
  const go = (rest: number[], acc: number[], size: number) => {
    if (acc.length === size) {
      f(NUMAMask.of(...acc));
      return;
    }
    for (let i = 0; i < rest.length; i++) go(rest.slice(i + 1), [...acc, rest[i]!], size);
  };
  for (let size = 1; size <= ids.length; size++) go(ids, [], size);
}

/** topologymanager.TopologyHint: affinity undefined means no preference. */
export interface TopologyHint {
  affinity?: NUMAMask;
  preferred: boolean;
}

/** A hint provider's hints per resource: undefined for a resource means no preference, [] means no possible affinity. */
export type ProviderHints = Record<string, TopologyHint[] | undefined> | undefined;
