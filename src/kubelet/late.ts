// A part that another part calls before it is built: the composition root builds parts in
// the order a pod travels, so a few calls point forward (a PLEG event wakes a pod worker, an
// eviction kills through it, a volume mounted pokes the node status). Each such binding is
// named and typed here, and a call made before it is set is a wiring bug: it throws, naming
// the part, instead of reading undefined.
export class Late<T> {
  readonly name: string;
  #value: T | undefined;

  constructor(name: string) {
    this.name = name;
  }

  set(value: T): T {
    if (this.#value !== undefined) throw new Error(`${this.name} was built twice`);
    this.#value = value;
    return value;
  }

  get(): T {
    if (this.#value === undefined) throw new Error(`${this.name} used before it was built`);
    return this.#value;
  }
}
