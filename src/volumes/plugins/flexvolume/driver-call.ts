// The contract between the kubelet and a FlexVolume driver (upstream's pkg/volume/flexvolume
// driver-call.go and util.go): the driver is run as `<driver> <command> <args...>`, the last
// argument of most commands being the options JSON (NewOptionsForDriver), and answers on stdout
// with a DriverStatus JSON object (`status` Success, Failure or "Not supported"). Pure but for
// runDriver, which runs the executable without blocking the event loop.
import { execFile } from 'node:child_process';
import type { Pod, Secret } from 'kubernetes-types/core/v1.js';
import type { VolumeSpec } from '../plugin.ts';

/** The driver calls the kubelet makes (upstream's initCmd ... unmountCmd). */
export type DriverCommand =
  | 'init'
  | 'getvolumename'
  | 'attach'
  | 'detach'
  | 'waitforattach'
  | 'mountdevice'
  | 'unmountdevice'
  | 'mount'
  | 'unmount';

/** upstream's option keys. */
export const OPTION = {
  fsType: 'kubernetes.io/fsType',
  readWrite: 'kubernetes.io/readwrite',
  secret: 'kubernetes.io/secret',
  fsGroup: 'kubernetes.io/mounterArgs.FsGroup',
  pvOrVolumeName: 'kubernetes.io/pvOrVolumeName',
  podName: 'kubernetes.io/pod.name',
  podNamespace: 'kubernetes.io/pod.namespace',
  podUID: 'kubernetes.io/pod.uid',
  serviceAccountName: 'kubernetes.io/serviceAccount.name',
} as const;

export const STATUS_SUCCESS = 'Success';
export const STATUS_NOT_SUPPORTED = 'Not supported';

/** upstream's DriverCapabilities: what init says the driver does. */
export interface DriverCapabilities {
  attach: boolean;
  selinuxRelabel: boolean;
  supportsMetrics: boolean;
  fsGroup: boolean;
  requiresFSResize: boolean;
}

/** upstream's defaultCapabilities: a driver is assumed to do everything but metrics, attach included. */
export const DEFAULT_CAPABILITIES: Readonly<DriverCapabilities> = {
  attach: true,
  selinuxRelabel: true,
  supportsMetrics: false,
  fsGroup: true,
  requiresFSResize: true,
};

/** upstream's DriverStatus, as a successful call answered. */
export interface DriverStatus {
  status: string;
  message?: string;
  /** The attached device (attach, waitforattach). */
  device?: string;
  volumeName?: string;
  attached?: boolean;
  /** The defaults with what the driver said over them (only init's are read). */
  capabilities: DriverCapabilities;
  volumeNewSize?: number;
}

/** A command the driver does not implement (upstream's isCmdNotSupportedErr): each has a fallback. */
export class NotSupportedError extends Error {
  constructor() {
    super(STATUS_NOT_SUPPORTED);
  }
}

export const isNotSupported = (e: unknown): boolean => e instanceof NotSupportedError;

// DriverStatus' fields by their JSON names lower-cased: Go's encoding/json matches keys without
// regard to case, and a driver written against it may send "Status" or "capabilities".
const STATUS_FIELDS: Record<
  string,
  [keyof Omit<DriverStatus, 'capabilities'> | 'capabilities', 'string' | 'boolean' | 'integer' | 'object']
> = {
  status: ['status', 'string'],
  message: ['message', 'string'],
  device: ['device', 'string'],
  volumename: ['volumeName', 'string'],
  attached: ['attached', 'boolean'],
  capabilities: ['capabilities', 'object'],
  volumenewsize: ['volumeNewSize', 'integer'],
};
const CAPABILITY_FIELDS: Record<string, keyof DriverCapabilities> = {
  attach: 'attach',
  selinuxrelabel: 'selinuxRelabel',
  supportsmetrics: 'supportsMetrics',
  fsgroup: 'fsGroup',
  requiresfsresize: 'requiresFSResize',
};

const jsonType = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
const a = (what: string) => (/^[aeiou]/.test(what) ? `an ${what}` : `a ${what}`);

function typed(v: unknown, want: 'string' | 'boolean' | 'integer' | 'object'): boolean {
  if (want === 'integer') return typeof v === 'number' && Number.isInteger(v);
  if (want === 'object') return jsonType(v) === 'object';
  return typeof v === want;
}

/**
 * Pure: upstream's handleCmdResponse. The driver's output as a DriverStatus: unknown fields are
 * ignored and null leaves a field unset, as Go's json.Unmarshal; a field of the wrong type, or
 * output that is not one JSON object, is an error naming the command and quoting the output.
 * "Not supported" throws NotSupportedError; any status but Success throws upstream's
 * `<cmd> command failed, status: <status>, reason: <message>`, the message a FailedMount shows.
 */
export function parseDriverStatus(command: string, output: string): DriverStatus {
  const bad = (why: string) =>
    new Error(`flexVolume driver output for ${command} is not a DriverStatus (${why}): ${JSON.stringify(output.slice(0, 512))}`);
  let raw: unknown;
  try {
    raw = JSON.parse(output);
  } catch (e) {
    throw bad((e as Error).message);
  }
  if (jsonType(raw) !== 'object') throw bad(`${a(jsonType(raw))}, not an object`);
  const status: DriverStatus = { status: '', capabilities: { ...DEFAULT_CAPABILITIES } };
  for (const [key, value] of Object.entries(raw as Record<string, unknown>)) {
    const field = STATUS_FIELDS[key.toLowerCase()];
    if (!field || value === null) continue;
    const [name, want] = field;
    if (!typed(value, want)) throw bad(`"${key}" is ${a(jsonType(value))}, not ${a(want)}`);
    if (name !== 'capabilities') {
      (status as unknown as Record<string, unknown>)[name] = value;
      continue;
    }
    for (const [ck, cv] of Object.entries(value as Record<string, unknown>)) {
      const cap = CAPABILITY_FIELDS[ck.toLowerCase()];
      if (!cap || cv === null) continue;
      if (typeof cv !== 'boolean') throw bad(`"${key}.${ck}" is ${a(jsonType(cv))}, not a boolean`);
      status.capabilities[cap] = cv;
    }
  }
  if (status.status === STATUS_NOT_SUPPORTED) throw new NotSupportedError();
  if (status.status !== STATUS_SUCCESS)
    throw new Error(`${command} command failed, status: ${status.status}, reason: ${status.message ?? ''}`);
  return status;
}

/** How a driver run ended (runDriver). */
export interface DriverRun {
  stdout: string;
  stderr: string;
  /** The exit status; 0 on success. */
  code: number;
  /** The executable could not be run (ENOENT, EACCES): why. */
  spawnError?: string;
  /** Killed at its deadline. */
  timedOut?: boolean;
}

/**
 * Pure: upstream's DriverCall.Run over a finished run. A driver that exits non-zero with a
 * Success answer is a driver bug (the exit status is the error); one that exits non-zero with a
 * Failure or "Not supported" answer is that answer. Only stdout is parsed: stderr is where a
 * driver logs (upstream parses both together, which fails a driver that logs there); a parse
 * error carries it.
 */
export function driverCallResult(command: string, executable: string, run: DriverRun): DriverStatus {
  if (run.timedOut) throw new Error(`flexVolume driver ${executable} ${command}: timeout`);
  if (run.spawnError !== undefined) throw new Error(`flexVolume driver ${executable} ${command} could not run: ${run.spawnError}`);
  let status: DriverStatus;
  try {
    status = parseDriverStatus(command, run.stdout);
  } catch (e) {
    if (e instanceof NotSupportedError || run.stderr.trim() === '' || !(e as Error).message.startsWith('flexVolume driver output')) throw e;
    throw new Error(`${(e as Error).message}; stderr: ${JSON.stringify(run.stderr.trim().slice(0, 512))}`);
  }
  if (run.code !== 0) throw new Error(`flexVolume driver ${executable} ${command}: exit status ${run.code} with status Success`);
  return status;
}

/** How long a driver call may take: upstream waits on all but waitforattach forever, which here would hold the pod's worker for good. */
export const DRIVER_CALL_TIMEOUT_MS = 5 * 60_000;
/** upstream's waitForAttachTimeout, the deadline of waitforattach. */
export const WAIT_FOR_ATTACH_TIMEOUT_MS = 10 * 60_000;

/**
 * Runs the driver executable, never rejecting; killed (SIGKILL, as upstream's cmd.Stop) at
 * timeoutMs. execFile forks the kubelet itself, which src/mount/command.ts's helper avoids for
 * mount(8); a driver is run a few times a volume, and needs the deadline and exit status that
 * helper does not give.
 */
export function runDriver(executable: string, args: readonly string[], timeoutMs: number): Promise<DriverRun> {
  return new Promise((resolve) =>
    execFile(
      executable,
      args,
      { encoding: 'utf8', timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: 4 << 20 },
      (err, stdout, stderr) => {
        if (!err) return resolve({ stdout, stderr, code: 0 });
        const e = err as NodeJS.ErrnoException & { killed?: boolean; signal?: string | null };
        if (e.killed && e.signal === 'SIGKILL') return resolve({ stdout, stderr, code: -1, timedOut: true });
        if (typeof e.code === 'number') return resolve({ stdout, stderr, code: e.code });
        // A signal other than ours, or maxBuffer exceeded.
        if (e.signal) return resolve({ stdout, stderr, code: -1, spawnError: `killed by ${e.signal}` });
        resolve({ stdout, stderr, code: -1, spawnError: e.message });
      },
    ),
  );
}

/** A flexVolume source as upstream's util.go reads it from a volume.Spec (getDriver, getFSType, getReadOnly, getOptions, getSecretNameAndNamespace). */
export interface FlexSource {
  driver: string;
  fsType: string;
  /** An inline volume's own readOnly; a PV's is the claim's (spec.ReadOnly): the PV's flexVolume.readOnly is not read, as upstream. */
  readOnly: boolean;
  options: Record<string, string>;
  /** upstream's spec.Name(): the pod's volume name, or the PersistentVolume's. */
  specName: string;
  /** Where the secret is read; undefined without a secretRef (a PV's namespace defaults to the pod's). */
  secret?: { namespace: string; name: string };
}

/** Pure: the spec's flexVolume source; undefined for another volume type. */
export function flexSource(spec: VolumeSpec, podNamespace: string): FlexSource | undefined {
  const inline = !spec.pv && spec.volume.flexVolume;
  const src = inline || spec.pv?.spec?.flexVolume;
  if (!src) return undefined;
  const secretName = src.secretRef?.name ?? '';
  const secretNamespace = inline ? podNamespace : (spec.pv!.spec!.flexVolume!.secretRef?.namespace ?? '') || podNamespace;
  return {
    driver: src.driver,
    fsType: src.fsType ?? '',
    readOnly: inline ? !!inline.readOnly : spec.readOnly,
    options: src.options ?? {},
    specName: inline ? spec.volume.name : spec.pv!.metadata!.name!,
    ...(secretName && secretNamespace && { secret: { namespace: secretNamespace, name: secretName } }),
  };
}

/**
 * Pure: upstream's NewOptionsForDriver: fsType, readwrite and the spec's name, then the extra
 * options, then the source's own options over them all; in JSON with the keys sorted, as Go
 * marshals a map.
 */
export function optionsJSON(src: FlexSource, extra: Record<string, string> = {}): string {
  const options: Record<string, string> = {
    [OPTION.fsType]: src.fsType,
    [OPTION.readWrite]: src.readOnly ? 'ro' : 'rw',
    [OPTION.pvOrVolumeName]: src.specName,
    ...extra,
    ...src.options,
  };
  return JSON.stringify(Object.fromEntries(Object.entries(options).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));
}

/** Pure: the mount call's extra options (flexVolumeMounter.SetUpAt): the pod, its service account, fsGroup when the pod has one. */
export function mountOptions(pod: Pod, secret: Record<string, string>): Record<string, string> {
  const fsGroup = pod.spec?.securityContext?.fsGroup;
  return {
    [OPTION.podName]: pod.metadata?.name ?? '',
    [OPTION.podNamespace]: pod.metadata?.namespace ?? '',
    [OPTION.podUID]: pod.metadata?.uid ?? '',
    [OPTION.serviceAccountName]: pod.spec?.serviceAccountName ?? '',
    ...secret,
    ...(fsGroup !== undefined && fsGroup !== null && { [OPTION.fsGroup]: String(fsGroup) }),
  };
}

/**
 * Pure: upstream's addSecretsToOptions over the secret read (util.GetSecretForPV): it must be of
 * the driver's type (`type: vendor/driver`); each key becomes kubernetes.io/secret/KEY, its value
 * base64 as the API sends it.
 */
export function secretOptions(secret: Secret, driver: string): Record<string, string> {
  if ((secret.type ?? '') !== driver) throw new Error(`cannot get secret of type ${driver}`);
  return Object.fromEntries(
    Object.entries(secret.data ?? {}).map(([k, v]) => [`${OPTION.secret}/${k}`, Buffer.from(v, 'base64').toString('base64')]),
  );
}
