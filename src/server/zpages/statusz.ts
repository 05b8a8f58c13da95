// /statusz's content (k8s.io/apiserver pkg/server/statusz: the Statusz types, aggregatePaths,
// statuszTextSerializer.Encode) and the paths the kubelet lists in it (pkg/kubelet/server
// InstallZPages: WithListedPaths over the container's RegisteredHandlePaths).
import type { ZpageVersion } from './negotiate.ts';

export const STATUSZ_WARNING =
  'Warning: This endpoint is not meant to be machine parseable, has no formatting compatibility guarantees and is for debugging purposes only.';

/** The text serializers pick one of these at random per encoding, so that no one parses the text. */
export const DELIMITERS = [':', ': ', '=', ' '] as const;

export interface StatuszFacts {
  /** The process's start, whole seconds (GetProcessStart, truncated by time.Unix). */
  startTime: Date;
  /**
   * Upstream's "Go version" (utilversion.Get().GoVersion: the toolchain the binary was built
   * with). kubelet-ts's counterpart is the Node.js that runs it, process.version, as its
   * kubernetes_build_info go_version; the field keeps its name so that the v1beta1 document
   * stays the type clients decode.
   */
  goVersion: string;
  /** version.Version's String(): no "v" ("1.36.3"). */
  binaryVersion: string;
  /** The effective version's emulation version, major.minor ("1.36"); '' omits it. */
  emulationVersion: string;
  /** The listed paths, before aggregation. */
  listedPaths: readonly string[];
}

export interface StatuszDocument {
  kind: 'Statusz';
  apiVersion: string;
  metadata: { name: string };
  startTime: string;
  uptimeSeconds: number;
  goVersion: string;
  binaryVersion: string;
  emulationVersion?: string;
  paths: string[] | null;
}

// Only the apiserver serves these; they are not for debugging.
const NON_DEBUGGING = new Set(['/apis', '/api', '/openid', '/openapi', '/.well-known']);

/** Pure: aggregatePaths: each listed path's first segment, once, sorted, the non-debugging ones out. */
export function aggregatePaths(listed: readonly string[]): string[] {
  const folders = new Set<string>();
  for (const p of listed) {
    const first = p.split('/')[1];
    if (!first) continue;
    const folder = `/${first}`;
    if (!NON_DEBUGGING.has(folder)) folders.add(folder);
  }
  return [...folders].sort();
}

export interface ServedHandlers {
  enableSystemLogHandler: boolean;
  enableProfilingHandler: boolean;
  flagz: boolean;
}

/**
 * Pure: what upstream's kubelet registers with Container.Handle (not as go-restful web
 * services, which RegisteredHandlePaths does not list) before /statusz, in its order: healthz and
 * its checks, the metrics, /logs and /debug/pprof only in their disabled form, /debug/flags/v in
 * either form, /configz, /flagz. So /pods, /stats or /exec are never listed upstream either.
 */
export function registeredHandlePaths(h: ServedHandlers): string[] {
  return [
    '/healthz',
    '/healthz/ping',
    '/healthz/log',
    '/healthz/syncloop',
    '/metrics/slis',
    '/metrics',
    '/metrics/cadvisor',
    '/metrics/resource',
    '/metrics/probes',
    ...(h.enableSystemLogHandler ? [] : ['/logs/']),
    ...(h.enableProfilingHandler ? [] : ['/debug/pprof/']),
    '/debug/flags/v',
    '/configz',
    ...(h.flagz ? ['/flagz'] : []),
  ];
}

/**
 * Pure but for the process's start and runtime: the facts of this kubelet. The versions are
 * DefaultBuildEffectiveVersion's: the binary's, and as emulation version its major.minor.
 */
export function statuszFacts(kubeletVersion: string): Omit<StatuszFacts, 'listedPaths'> {
  const binaryVersion = kubeletVersion.replace(/^v/, '');
  return {
    startTime: new Date(Math.floor(performance.timeOrigin / 1000) * 1000),
    goVersion: process.version,
    binaryVersion,
    emulationVersion: binaryVersion.split('.').slice(0, 2).join('.'),
  };
}

/** Pure: the v1alpha1 or v1beta1 Statusz (the two have the same fields), in the types' field order. */
export function statuszDocument(component: string, f: StatuszFacts, version: ZpageVersion, now: Date): StatuszDocument {
  const paths = aggregatePaths(f.listedPaths);
  return {
    kind: 'Statusz',
    apiVersion: `config.k8s.io/${version}`,
    metadata: { name: component },
    // metav1.Time: RFC 3339 in UTC, whole seconds.
    startTime: f.startTime.toISOString().replace(/\.\d+Z$/, 'Z'),
    uptimeSeconds: uptimeSeconds(f.startTime, now),
    goVersion: f.goVersion,
    binaryVersion: f.binaryVersion,
    ...(f.emulationVersion ? { emulationVersion: f.emulationVersion } : {}),
    paths: paths.length ? paths : null,
  };
}

const uptimeSeconds = (start: Date, now: Date) => Math.max(0, Math.floor((now.getTime() - start.getTime()) / 1000));

/** html.EscapeString. */
export function htmlEscape(s: string): string {
  return s.replace(/[<>&'"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&#39;', '"': '&#34;' })[c]!);
}

export interface Zone {
  /** Minutes east of UTC at the instant formatted. */
  offsetMinutes: number;
  /** The zone's abbreviation, as Go's MST in time.UnixDate ("UTC", "CET"). */
  name: string;
}

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const pad2 = (n: number) => String(n).padStart(2, '0');

/** Pure: Go's time.UnixDate, "Mon Jan _2 15:04:05 MST 2006", in the zone given. */
export function unixDate(t: Date, zone: Zone): string {
  const d = new Date(t.getTime() + zone.offsetMinutes * 60_000);
  return `${DAYS[d.getUTCDay()]} ${MONTHS[d.getUTCMonth()]} ${String(d.getUTCDate()).padStart(2, ' ')} ${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}:${pad2(d.getUTCSeconds())} ${zone.name} ${d.getUTCFullYear()}`;
}

/** Pure: statusz's uptime, "%d hr %02d min %02d sec". */
export function uptimeText(start: Date, now: Date): string {
  const s = Math.floor((now.getTime() - start.getTime()) / 1000);
  return `${Math.trunc(s / 3600)} hr ${pad2(Math.trunc(s / 60) % 60)} min ${pad2(s % 60)} sec`;
}

/** Pure: statuszTextSerializer.Encode of the v1beta1 document, with the delimiter drawn. */
export function statuszText(component: string, f: StatuszFacts, now: Date, delim: string, zone: Zone): string {
  const doc = statuszDocument(component, f, 'v1beta1', now);
  const d = htmlEscape(delim);
  const emulation = doc.emulationVersion ? `Emulation version${d} ${htmlEscape(doc.emulationVersion)}` : '';
  const paths = doc.paths ? `Paths${d} ${htmlEscape(doc.paths.join(' '))}` : '';
  return (
    `\n${component} statusz\n${STATUSZ_WARNING}\n` +
    `\nStarted${d} ${htmlEscape(unixDate(f.startTime, zone))}` +
    `\nUp${d} ${htmlEscape(uptimeText(f.startTime, now))}` +
    `\nGo version${d} ${htmlEscape(doc.goVersion)}` +
    `\nBinary version${d} ${htmlEscape(doc.binaryVersion)}` +
    `\n${emulation}\n${paths}\n`
  );
}
