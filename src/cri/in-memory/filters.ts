// ListContainers' and ListPodSandbox's filters as containerd applies them: every field set must
// match (id by prefix, as containerd's truncindex does; labels all present with their values).

/** Pure: the labels carry every key of the selector with its value. */
export function labelsMatch(labels: Record<string, string>, selector: Record<string, string> | undefined): boolean {
  for (const [k, v] of Object.entries(selector ?? {})) if (labels[k] !== v) return false;
  return true;
}

export interface ItemFacts {
  id: string;
  state: string;
  labels: Record<string, string>;
  podSandboxId?: string;
}

export interface ListFilter {
  id?: string;
  state?: { state: string } | null;
  podSandboxId?: string;
  labelSelector?: Record<string, string>;
}

/** Pure: whether an item passes a CRI list filter (an empty or absent filter passes all). */
export function passes(item: ItemFacts, filter: ListFilter | null | undefined): boolean {
  if (!filter) return true;
  if (filter.id && !item.id.startsWith(filter.id)) return false;
  if (filter.state && filter.state.state !== item.state) return false;
  if (filter.podSandboxId && !(item.podSandboxId ?? '').startsWith(filter.podSandboxId)) return false;
  return labelsMatch(item.labels, filter.labelSelector);
}
