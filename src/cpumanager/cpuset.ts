// A set of logical CPU ids, as upstream's k8s.io/utils/cpuset: immutable, printed and parsed in
// the kernel's list format ("0-3,7"), the form of cpuset.cpus, sysfs cpulists, reservedSystemCPUs
// and the cpu_manager_state checkpoint. Pure.

export class CPUSet {
  /** Sorted, unique. */
  private readonly ids: readonly number[];

  private constructor(sorted: readonly number[]) {
    this.ids = sorted;
  }

  /** cpuset.New. */
  static of(...ids: number[]): CPUSet {
    return new CPUSet([...new Set(ids)].sort((a, b) => a - b));
  }

  static readonly EMPTY = CPUSet.of();

  get size(): number {
    return this.ids.length;
  }
  isEmpty(): boolean {
    return this.ids.length === 0;
  }
  has(id: number): boolean {
    return this.ids.includes(id);
  }
  /** Ascending (cpuset.List). */
  list(): number[] {
    return [...this.ids];
  }
  equals(o: CPUSet): boolean {
    return this.size === o.size && this.ids.every((x, i) => x === o.ids[i]);
  }
  isSubsetOf(o: CPUSet): boolean {
    return this.ids.every((x) => o.has(x));
  }
  union(...others: CPUSet[]): CPUSet {
    return CPUSet.of(...this.ids, ...others.flatMap((o) => o.ids));
  }
  intersection(o: CPUSet): CPUSet {
    return new CPUSet(this.ids.filter((x) => o.has(x)));
  }
  difference(o: CPUSet): CPUSet {
    return new CPUSet(this.ids.filter((x) => !o.has(x)));
  }

  /** cpuset.String: ascending, adjacent ids as ranges ("0-2,4"); empty as "". */
  toString(): string {
    const parts: string[] = [];
    for (let i = 0; i < this.ids.length; ) {
      let j = i;
      while (j + 1 < this.ids.length && this.ids[j + 1] === this.ids[j]! + 1) j++;
      parts.push(i === j ? String(this.ids[i]) : `${this.ids[i]}-${this.ids[j]}`);
      i = j + 1;
    }
    return parts.join(',');
  }
}

/** Go's strconv.Atoi over the text, with its error text; an integer or throws. */
function atoi(s: string): number {
  if (!/^[+-]?\d+$/.test(s)) throw new Error(`strconv.Atoi: parsing ${JSON.stringify(s)}: invalid syntax`);
  return Number(s);
}

/** cpuset.Parse: "" is empty; "0-5,34,46-48"; a range whose start is past its end is refused. Throws with upstream's text. */
export function parseCPUSet(s: string): CPUSet {
  if (s === '') return CPUSet.EMPTY;
  const ids: number[] = [];
  for (const r of s.split(',')) {
    const dash = r.indexOf('-');
    if (dash < 0) {
      ids.push(atoi(r));
      continue;
    }
    const start = atoi(r.slice(0, dash)),
      end = atoi(r.slice(dash + 1));
    if (start > end) throw new Error(`invalid range ${JSON.stringify(r)} (${start} > ${end})`);
    for (let e = start; e <= end; e++) ids.push(e);
  }
  return CPUSet.of(...ids);
}
