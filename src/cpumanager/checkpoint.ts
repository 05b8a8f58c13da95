// The CPU manager's checkpoint, <root-dir>/cpu_manager_state, in upstream's v2 format
// (state.CPUManagerCheckpointV2, written while PodLevelResourceManagers is off) with upstream's
// checksum, so that a node switched between kubelet-ts and the upstream kubelet keeps its
// containers' CPUs. A checkpoint of another policy is refused, as upstream's restoreState.
import { join } from 'node:path';
import { readCheckpointFile, writeCheckpointFile } from '../checkpoint/file-store.ts';
import { CPUSet, parseCPUSet } from './cpuset.ts';
import type { CPUState } from './static-policy.ts';

export const CPU_MANAGER_STATE_FILE = 'cpu_manager_state';

/** The JSON's fields: policyName, defaultCpuSet, entries (pod UID -> container -> cpuset text; left out when empty), checksum. */
export interface CheckpointV2 {
  policyName: string;
  defaultCpuSet: string;
  entries: Record<string, Record<string, string>>;
}

const byString = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const sortedKeys = (m: Record<string, unknown>) => Object.keys(m).sort(byString);

/**
 * dump.ForHash of the checkpoint with its checksum 0: go-spew's "%#v" with sorted keys, a
 * pointer's type and no address, strings unquoted. typeName: upstream writes under the legacy
 * "CPUManagerCheckpoint" (MarshalCheckpoint replaces the V2 name) and reads either.
 */
export function spewCheckpoint(c: CheckpointV2, typeName = 'CPUManagerCheckpoint'): string {
  const inner = (m: Record<string, string>) =>
    `map[${sortedKeys(m)
      .map((k) => `${k}:${m[k]}`)
      .join(' ')}]`;
  const entries = `map[${sortedKeys(c.entries)
    .map((k) => `${k}:${inner(c.entries[k]!)}`)
    .join(' ')}]`;
  return (
    `(*state.${typeName}){PolicyName:(string)${c.policyName} DefaultCPUSet:(string)${c.defaultCpuSet} ` +
    `Entries:(map[string]map[string]string)${entries} Checksum:(checksum.Checksum)0}`
  );
}

/** hash/fnv New32a over the UTF-8 bytes. */
function fnv32a(text: string): number {
  let h = 0x811c9dc5;
  for (const b of Buffer.from(text, 'utf8')) h = Math.imul(h ^ b, 0x01000193) >>> 0;
  return h;
}

export const checksum = (c: CheckpointV2, typeName?: string): number => fnv32a(spewCheckpoint(c, typeName));

/** The file's text as Go's json.Marshal writes it: keys sorted, entries left out when empty. */
export function marshalCheckpoint(c: CheckpointV2): string {
  const obj = (m: Record<string, string>) =>
    `{${sortedKeys(m)
      .map((k) => `${JSON.stringify(k)}:${JSON.stringify(m[k])}`)
      .join(',')}}`;
  const pods = sortedKeys(c.entries);
  const entries = pods.length ? `,"entries":{${pods.map((p) => `${JSON.stringify(p)}:${obj(c.entries[p]!)}`).join(',')}}` : '';
  return `{"policyName":${JSON.stringify(c.policyName)},"defaultCpuSet":${JSON.stringify(c.defaultCpuSet)}${entries},"checksum":${checksum(c)}}`;
}

/** The checkpoint of a file's text; throws "checkpoint is corrupted" when its checksum matches neither name upstream hashes under. */
export function unmarshalCheckpoint(text: string): CheckpointV2 {
  const raw = JSON.parse(text) as { policyName?: unknown; defaultCpuSet?: unknown; entries?: unknown; checksum?: unknown };
  const entries: Record<string, Record<string, string>> = {};
  for (const [pod, cs] of Object.entries((raw.entries ?? {}) as Record<string, unknown>)) {
    if (typeof cs !== 'object' || cs === null)
      throw new Error('json: cannot unmarshal entries: expected an object of container names (a v1 checkpoint)');
    entries[pod] = {};
    for (const [name, v] of Object.entries(cs)) {
      if (typeof v !== 'string') throw new Error(`json: cannot unmarshal entries.${pod}.${name}: expected a string`);
      entries[pod][name] = v;
    }
  }
  const c: CheckpointV2 = { policyName: String(raw.policyName ?? ''), defaultCpuSet: String(raw.defaultCpuSet ?? ''), entries };
  const sum = Number(raw.checksum ?? 0);
  // 0: an old file backend's, accepted as upstream does.
  if (sum !== 0 && sum !== checksum(c, 'CPUManagerCheckpointV2') && sum !== checksum(c)) throw new Error('checkpoint is corrupted');
  return c;
}

export function toCheckpoint(policyName: string, s: CPUState): CheckpointV2 {
  const entries: Record<string, Record<string, string>> = {};
  for (const [pod, cs] of s.assignments) entries[pod] = Object.fromEntries([...cs].map(([n, set]) => [n, set.toString()]));
  return { policyName, defaultCpuSet: s.defaultCPUSet.toString(), entries };
}

/** restoreState's checks and parsing: the policy must be the configured one; every cpuset must parse. */
export function stateOf(c: CheckpointV2, policyName: string): CPUState {
  if (c.policyName !== policyName)
    throw new Error(`configured policy "${policyName}" differs from state checkpoint policy "${c.policyName}"`);
  let defaultCPUSet: CPUSet;
  try {
    defaultCPUSet = parseCPUSet(c.defaultCpuSet);
  } catch (e) {
    throw new Error(`could not parse default cpu set "${c.defaultCpuSet}": ${(e as Error).message}`);
  }
  const assignments = new Map<string, Map<string, CPUSet>>();
  for (const [pod, cs] of Object.entries(c.entries)) {
    const m = new Map<string, CPUSet>();
    for (const [name, text] of Object.entries(cs)) {
      try {
        m.set(name, parseCPUSet(text));
      } catch (e) {
        throw new Error(`could not parse cpuset "${text}" for container "${name}" in pod "${pod}": ${(e as Error).message}`);
      }
    }
    assignments.set(pod, m);
  }
  return { defaultCPUSet, assignments };
}

/**
 * NewCheckpointState: the state in rootDir's checkpoint, or a new empty one written at once.
 * Throws with upstream's text, naming the file to delete.
 */
export function restoreState(rootDir: string, policyName: string): CPUState {
  const path = join(rootDir, CPU_MANAGER_STATE_FILE);
  try {
    const text = readCheckpointFile(path);
    if (text === undefined) {
      const empty: CPUState = { defaultCPUSet: CPUSet.EMPTY, assignments: new Map() };
      writeState(rootDir, policyName, empty);
      return empty;
    }
    return stateOf(unmarshalCheckpoint(text), policyName);
  } catch (e) {
    throw new Error(
      `could not restore state from checkpoint: ${(e as Error).message}, please drain this node and delete the CPU manager checkpoint file "${path}" before restarting Kubelet`,
    );
  }
}

/** storeState: the whole state, written whole or not at all. */
export function writeState(rootDir: string, policyName: string, s: CPUState): void {
  writeCheckpointFile(join(rootDir, CPU_MANAGER_STATE_FILE), marshalCheckpoint(toCheckpoint(policyName, s)));
}
