// The device manager's checkpoint, <root-dir>/device-plugins/kubelet_internal_checkpoint, in
// upstream's JSON (devicemanager/checkpoint.Data) with upstream's checksum, so that a restarted
// kubelet (ours or upstream's) keeps which devices each container got.
import { join } from 'node:path';
import { readCheckpointFile, writeCheckpointFile } from '../checkpoint/file-store.ts';

export const CHECKPOINT_FILE = 'kubelet_internal_checkpoint';

/** Device ids by NUMA node (-1: no topology), as upstream's DevicesPerNUMA; keys as JSON writes int64 map keys. */
export type DevicesPerNUMA = Record<string, string[] | null>;

/** One container's devices of one resource; AllocResp: its ContainerAllocateResponse, protobuf, base64 (Go's []byte in JSON). */
export interface PodDevicesEntry {
  PodUID: string;
  ContainerName: string;
  ResourceName: string;
  DeviceIDs: DevicesPerNUMA | null;
  AllocResp: string | null;
}

/** upstream's checkpointData; null stands where Go had a nil slice or map, which hashes differently from an empty one. */
export interface CheckpointData {
  PodDeviceEntries: PodDevicesEntry[] | null;
  RegisteredDevices: Record<string, string[] | null> | null;
}

const list = (xs: readonly (string | number)[] | null) => (xs === null ? '<nil>' : `[${xs.join(' ')}]`);

function map<V>(m: Record<string, V> | null, byNumber: boolean, value: (v: V) => string): string {
  if (m === null) return '<nil>';
  const keys = Object.keys(m).sort(byNumber ? (a, b) => Number(a) - Number(b) : (a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return `map[${keys.map((k) => `${k}:${value(m[k]!)}`).join(' ')}]`;
}

const bytes = (b64: string | null) => (b64 === null ? '<nil>' : list([...Buffer.from(b64, 'base64')]));

/**
 * The data as upstream hashes it: dump.ForHash, go-spew's "%#v" with sorted keys and no
 * pointers, which prints each field's type, strings unquoted, nil as <nil>.
 */
export function spewCheckpointData(d: CheckpointData): string {
  const entry = (e: PodDevicesEntry) =>
    `{PodUID:(string)${e.PodUID} ContainerName:(string)${e.ContainerName} ResourceName:(string)${e.ResourceName} ` +
    `DeviceIDs:(checkpoint.DevicesPerNUMA)${map(e.DeviceIDs, true, list)} AllocResp:([]uint8)${bytes(e.AllocResp)}}`;
  const entries = d.PodDeviceEntries === null ? '<nil>' : `[${d.PodDeviceEntries.map(entry).join(' ')}]`;
  return (
    `(checkpoint.checkpointData){PodDeviceEntries:([]checkpoint.PodDevicesEntry)${entries} ` +
    `RegisteredDevices:(map[string][]string)${map(d.RegisteredDevices, false, list)}}`
  );
}

/** hash/fnv New32a over the UTF-8 bytes. */
function fnv32a(text: string): number {
  let h = 0x811c9dc5;
  for (const b of Buffer.from(text, 'utf8')) h = Math.imul(h ^ b, 0x01000193) >>> 0;
  return h;
}

/** upstream's checksum.New: FNV-32a of the spew dump. */
export const checksum = (d: CheckpointData): number => fnv32a(spewCheckpointData(d));

// JSON objects with their keys in Go's order (sorted as strings): JSON.stringify would put
// integer-like keys ("0") ahead of the others ("-1").
function jsonMap(m: Record<string, unknown> | null): string {
  if (m === null) return 'null';
  const keys = Object.keys(m).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${keys.map((k) => `${JSON.stringify(k)}:${JSON.stringify(m[k])}`).join(',')}}`;
}

/** The file's text: {"Data":...,"Checksum":N} as Go's json.Marshal writes it. */
export function marshalCheckpoint(d: CheckpointData): string {
  const entry = (e: PodDevicesEntry) =>
    `{"PodUID":${JSON.stringify(e.PodUID)},"ContainerName":${JSON.stringify(e.ContainerName)},"ResourceName":${JSON.stringify(e.ResourceName)},` +
    `"DeviceIDs":${jsonMap(e.DeviceIDs)},"AllocResp":${JSON.stringify(e.AllocResp)}}`;
  const entries = d.PodDeviceEntries === null ? 'null' : `[${d.PodDeviceEntries.map(entry).join(',')}]`;
  return `{"Data":{"PodDeviceEntries":${entries},"RegisteredDevices":${jsonMap(d.RegisteredDevices)}},"Checksum":${checksum(d)}}`;
}

/** The data of a checkpoint file's text; throws on a checksum that does not match (upstream's CorruptCheckpointError). */
export function unmarshalCheckpoint(text: string): CheckpointData {
  const { Data, Checksum } = JSON.parse(text) as { Data?: Partial<CheckpointData>; Checksum?: number };
  // Fields absent from the JSON keep what upstream's getCheckpoint starts with: empty, not nil.
  const data: CheckpointData = {
    PodDeviceEntries:
      (Data?.PodDeviceEntries === undefined ? [] : Data.PodDeviceEntries)?.map((e) => ({
        PodUID: e.PodUID ?? '',
        ContainerName: e.ContainerName ?? '',
        ResourceName: e.ResourceName ?? '',
        DeviceIDs: e.DeviceIDs ?? null,
        AllocResp: e.AllocResp ?? null,
      })) ?? null,
    RegisteredDevices: Data?.RegisteredDevices === undefined ? {} : Data.RegisteredDevices,
  };
  const actual = checksum(data);
  if (actual !== Checksum) throw new Error(`checkpoint is corrupted: checksum ${Checksum} does not match the data's ${actual}`);
  return data;
}

/** Reads the checkpoint in dir; undefined when there is none. */
export function readCheckpoint(dir: string): CheckpointData | undefined {
  const text = readCheckpointFile(join(dir, CHECKPOINT_FILE));
  return text === undefined ? undefined : unmarshalCheckpoint(text);
}

/** Writes it whole or not at all (src/checkpoint). */
export function writeCheckpoint(dir: string, d: CheckpointData): void {
  writeCheckpointFile(join(dir, CHECKPOINT_FILE), marshalCheckpoint(d));
}
