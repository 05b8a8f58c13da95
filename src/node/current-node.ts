// The one holder of this kubelet's Node as the apiserver last showed it: its UID (the owner
// of the Lease and of mirror pods; a re-registered Node has a new one), its podCIDR and its
// capacity and allocatable, which admission, pod config, volumes and eviction read. The node
// agent sets it; a new UID or podCIDR is told to whoever asked.
import type { Node } from 'kubernetes-types/core/v1.js';

/** Pure: what a newer version of the Node changes that others act on. */
export function nodeChanges(prev: Node | undefined, next: Node): { uid?: string; podCIDR?: string } {
  const uid = next.metadata?.uid,
    cidr = next.spec?.podCIDR;
  return {
    ...(uid && uid !== prev?.metadata?.uid ? { uid } : {}),
    ...(cidr && cidr !== prev?.spec?.podCIDR ? { podCIDR: cidr } : {}),
  };
}

export class CurrentNode {
  readonly name: string;
  #node: Node | undefined;
  readonly #onUID: ((uid: string) => void)[] = [];
  readonly #onPodCIDR: ((cidr: string) => void)[] = [];

  constructor(name: string) {
    this.name = name;
  }

  get(): Node | undefined {
    return this.#node;
  }
  uid(): string | undefined {
    return this.#node?.metadata?.uid;
  }
  /** The Node as an owner (mirror pods, the Lease); undefined before registration. */
  owner(): { name: string; uid: string } | undefined {
    const uid = this.uid();
    return uid ? { name: this.name, uid } : undefined;
  }
  allocatable(): Record<string, string> | undefined {
    return this.#node?.status?.allocatable;
  }
  capacity(): Record<string, string> | undefined {
    return this.#node?.status?.capacity;
  }

  set(node: Node): void {
    const changes = nodeChanges(this.#node, node);
    this.#node = node;
    if (changes.uid) for (const f of this.#onUID) f(changes.uid);
    if (changes.podCIDR) for (const f of this.#onPodCIDR) f(changes.podCIDR);
  }

  onNewUID(f: (uid: string) => void): void {
    this.#onUID.push(f);
  }
  onNewPodCIDR(f: (cidr: string) => void): void {
    this.#onPodCIDR.push(f);
  }
}
