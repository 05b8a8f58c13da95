// The IDs the kubelet hands out to pods' user namespaces: upstream's getKubeletMappings
// (pkg/kubelet/kubelet_pods.go), which asks getsubids for the subordinate IDs of the user
// "kubelet", read here from /etc/subuid and /etc/subgid directly; and the checks
// MakeUserNsManager (pkg/kubelet/userns/userns_manager.go) makes of that range. Pure: the
// files' text comes in, and errors are thrown with upstream's words.

const KUBELET_USER = 'kubelet';

/** Upstream's DefaultKubeletUserNamespacesIDsPerPod: a pod's share unless userNamespaces.idsPerPod says otherwise, and its unit. */
export const IDS_PER_POD = 65536;

/** A range of host IDs: [firstID, firstID + length). */
export interface IdRange {
  firstID: number;
  length: number;
}

/** getKubeletMappings' default: every ID above a pod's first share (ID 0 is never handed out). */
export const defaultRange = (idsPerPod: number): IdRange => ({ firstID: idsPerPod, length: 2 ** 32 - idsPerPod });

/** The /etc files getKubeletMappings reads through user.Lookup and getsubids; a file that is absent is undefined. */
export interface IdFiles {
  passwd?: string;
  subuid?: string;
  subgid?: string;
}

/** The lines of a subuid/subgid file that name the user, by name or by uid (as shadow's lookup does). */
function subIdLines(file: string | undefined, name: string, uid: string | undefined): string[] {
  return (file ?? '')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => {
      const owner = l.split(':')[0];
      return l !== '' && !l.startsWith('#') && (owner === name || (uid !== undefined && owner === uid));
    });
}

const MAX_UINT32 = 2 ** 32 - 1;

/** parseGetSubIdsOutput, on the file's line NAME:START:COUNT instead of getsubids' "0: NAME START COUNT". */
function parseSubIdLines(lines: string[]): IdRange {
  const input = lines.join('\n');
  if (lines.length !== 1) throw new Error(`error parsing line ${JSON.stringify(input)}: it must contain only one line`);
  const parts = lines[0]!.split(':');
  if (parts.length !== 3) throw new Error(`invalid line ${JSON.stringify(input)}`);
  const [firstID, length] = [parts[1]!, parts[2]!].map((p) => (/^\d+$/.test(p) ? Number(p) : Number.NaN));
  for (const n of [firstID!, length!]) {
    if (!(n <= MAX_UINT32)) throw new Error(`error parsing line ${JSON.stringify(input)}: not an unsigned 32-bit number`);
  }
  return { firstID: firstID!, length: length! };
}

/**
 * getKubeletMappings: without a user "kubelet" (or with no subordinate IDs for it, as when
 * getsubids is not installed) the default range; else its one range, the same for uids and gids.
 */
export function kubeletIdRange(files: IdFiles, idsPerPod: number): IdRange {
  const user = (files.passwd ?? '').split('\n').find((l) => l.split(':')[0] === KUBELET_USER);
  if (!user) return defaultRange(idsPerPod);
  const uid = user.split(':')[2];
  const uids = subIdLines(files.subuid, KUBELET_USER, uid);
  const gids = subIdLines(files.subgid, KUBELET_USER, uid);
  if (uids.length === 0 && gids.length === 0) return defaultRange(idsPerPod);
  // Upstream compares getsubids' two outputs as text: the ranges must be the same ones.
  const ranges = (lines: string[]) => lines.map((l) => l.split(':').slice(1).join(':')).join('\n');
  if (ranges(uids) !== ranges(gids)) throw new Error(`mismatched subuids and subgids for user "${KUBELET_USER}"`);
  return parseSubIdLines(uids);
}

/** Where the allocator's slots of size IDs lie: slot i is host IDs (offset + i) * size onwards. */
export interface Slots {
  offset: number;
  count: number;
  /** A pod's share: userNamespaces.idsPerPod (upstream's userNsLength). */
  size: number;
}

/** MakeUserNsManager's checks of the kubelet's range, with its words; the slots of idsPerPod IDs it allocates from. */
export function allocatorSlots(range: IdRange, maxPods: number, idsPerPod: number): Slots {
  const n = idsPerPod;
  if (n % IDS_PER_POD !== 0) throw new Error(`kubelet user namespace length ${n} is not a multiple of ${IDS_PER_POD}`);
  if (range.firstID % n !== 0) throw new Error(`kubelet user assigned ID ${range.firstID} is not a multiple of ${n}`);
  // Mapping ID 0 would circumvent the user namespace.
  if (range.firstID < n) throw new Error(`kubelet user assigned ID ${range.firstID} must be greater or equal to ${n}`);
  if (range.length % n !== 0) throw new Error(`kubelet user assigned IDs length ${range.length} is not a multiple of ${n}`);
  if (range.length / n < maxPods) throw new Error(`kubelet user assigned IDs are not enough to support ${maxPods} pods`);
  return { offset: range.firstID / n, count: range.length / n, size: n };
}
