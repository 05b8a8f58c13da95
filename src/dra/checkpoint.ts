// The DRA manager's checkpoint, <root-dir>/dra_manager_state, in upstream's format
// (cm/dra/state: {"Data": "<JSON of the claim infos>", "Checksum": CRC-32 of Data}), so that a
// restarted kubelet (ours or upstream's) still knows which claims it prepared, for which pods,
// and the CDI devices their containers get.
import { join } from 'node:path';
import { readCheckpointFile, writeCheckpointFile } from '../checkpoint/file-store.ts';
import { crc32 } from 'node:zlib';
import type { ClaimInfo, PreparedDevice } from './claims.ts';

/** upstream's draManagerStateFileName. */
export const CHECKPOINT_FILE = 'dra_manager_state';

const KIND = 'DRACheckpoint';
const API_VERSION = 'checkpoint.dra.kubelet.k8s.io/v1';

/** upstream's state.Device in JSON; null where Go had a nil slice or pointer. */
interface DeviceJson {
  PoolName?: string;
  DeviceName?: string;
  ShareID?: string | null;
  RequestNames?: string[] | null;
  CDIDeviceIDs?: string[] | null;
}

/** upstream's state.ClaimInfoState in JSON: PodUIDs is a set (map to {}). */
interface ClaimInfoJson {
  ClaimUID?: string;
  ClaimName?: string;
  Namespace?: string;
  PodUIDs?: Record<string, object> | null;
  DriverState?: Record<string, { Devices?: DeviceJson[] | null }> | null;
}

const sorted = <V>(entries: Iterable<[string, V]>) => [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
const orNull = (xs: string[]) => (xs.length ? xs : null);

/** Go's json.Marshal escapes these in strings; the text matches upstream's byte for byte. */
const goJson = (v: unknown) =>
  JSON.stringify(v).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

function toJson(info: ClaimInfo): ClaimInfoJson {
  const device = (d: PreparedDevice): DeviceJson => ({
    PoolName: d.poolName,
    DeviceName: d.deviceName,
    ShareID: d.shareId ?? null,
    RequestNames: orNull(d.requestNames),
    CDIDeviceIDs: orNull(d.cdiDeviceIds),
  });
  return {
    ClaimUID: info.claimUID,
    ClaimName: info.claimName,
    Namespace: info.namespace,
    // Go writes map keys sorted.
    PodUIDs: Object.fromEntries(sorted([...info.podUIDs].map((uid) => [uid, {}]))),
    DriverState: Object.fromEntries(
      sorted(info.drivers).map(([driver, devices]) => [driver, { Devices: devices.length ? devices.map(device) : null }]),
    ),
  };
}

function fromJson(c: ClaimInfoJson): ClaimInfo {
  const device = (d: DeviceJson): PreparedDevice => ({
    poolName: d.PoolName ?? '',
    deviceName: d.DeviceName ?? '',
    ...(d.ShareID != null ? { shareId: d.ShareID } : {}),
    requestNames: d.RequestNames ?? [],
    cdiDeviceIds: d.CDIDeviceIDs ?? [],
  });
  return {
    claimUID: c.ClaimUID ?? '',
    claimName: c.ClaimName ?? '',
    namespace: c.Namespace ?? '',
    podUIDs: new Set(Object.keys(c.PodUIDs ?? {})),
    drivers: new Map(Object.entries(c.DriverState ?? {}).map(([driver, s]) => [driver, (s.Devices ?? []).map(device)])),
    prepared: false,
  };
}

/** The file's text (upstream's NewCheckpoint then MarshalCheckpoint). */
export function encodeCheckpoint(claims: Iterable<ClaimInfo>): string {
  const data = goJson({ kind: KIND, apiVersion: API_VERSION, ClaimInfoStateList: [...claims].map(toJson) });
  return goJson({ Data: data, Checksum: crc32(data) });
}

/** The claims of a checkpoint's text, none prepared; throws when it is corrupt (upstream's UnmarshalCheckpoint). */
export function decodeCheckpoint(text: string): ClaimInfo[] {
  const { Data, Checksum } = JSON.parse(text) as { Data?: unknown; Checksum?: unknown };
  if (typeof Data !== 'string') throw new Error('checkpoint has no Data');
  const actual = crc32(Data);
  if (actual !== Checksum) throw new Error(`checkpoint is corrupted: checksum ${Checksum} does not match the data's ${actual}`);
  const { ClaimInfoStateList } = JSON.parse(Data) as { ClaimInfoStateList?: ClaimInfoJson[] | null };
  return (ClaimInfoStateList ?? []).map(fromJson);
}

/** The checkpointed claims in dir; undefined when there is no checkpoint. */
export function readCheckpoint(dir: string): ClaimInfo[] | undefined {
  const text = readCheckpointFile(join(dir, CHECKPOINT_FILE));
  return text === undefined ? undefined : decodeCheckpoint(text);
}

/** Writes it whole or not at all (src/checkpoint). */
export function writeCheckpoint(dir: string, claims: Iterable<ClaimInfo>): void {
  writeCheckpointFile(join(dir, CHECKPOINT_FILE), encodeCheckpoint(claims));
}
