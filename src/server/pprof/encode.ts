// pprof's profile.proto (proto/pprof/profile.proto) on the wire, with protobufjs's Writer as
// src/apiserver/protobuf writes its messages: a profile as plain data, its strings interned
// into the string table here, repeated numbers packed. `go tool pprof` reads the gzipped bytes.
import protobuf from 'protobufjs/minimal.js';
import { gzipSync } from 'node:zlib';

/** One frame: a function and where in its file (lines 1-based, 0 unknown). */
export interface Frame {
  name: string;
  file: string;
  line: number;
  column?: number;
  /** The function's first line. */
  startLine?: number;
}

export interface Profile {
  /** What each value measures, in order: [type, unit], e.g. ['cpu', 'nanoseconds']. */
  sampleTypes: [string, string][];
  /** Each sample's stack, leaf first, and its values in sampleTypes' order. */
  samples: { stack: Frame[]; values: number[] }[];
  timeNanos?: number;
  durationNanos?: number;
  periodType?: [string, string];
  period?: number;
  /** The sample type pprof shows unless told otherwise. */
  defaultSampleType?: string;
  comments?: string[];
}

/** The profile as profile.proto's bytes (not gzipped). */
export function encodeProfile(p: Profile): Uint8Array {
  const strings = new Map<string, number>([['', 0]]);
  const str = (s: string) => {
    let i = strings.get(s);
    if (i === undefined) strings.set(s, (i = strings.size));
    return i;
  };
  const functions = new Map<string, { id: number; name: number; file: number; startLine: number }>();
  const locations = new Map<string, { id: number; functionId: number; line: number; column: number }>();
  const locationOf = (f: Frame) => {
    const fkey = `${f.name}\0${f.file}\0${f.startLine ?? 0}`;
    let fn = functions.get(fkey);
    if (!fn) functions.set(fkey, (fn = { id: functions.size + 1, name: str(f.name), file: str(f.file), startLine: f.startLine ?? 0 }));
    const lkey = `${fn.id}\0${f.line}\0${f.column ?? 0}`;
    let loc = locations.get(lkey);
    if (!loc) locations.set(lkey, (loc = { id: locations.size + 1, functionId: fn.id, line: f.line, column: f.column ?? 0 }));
    return loc.id;
  };

  const w = protobuf.Writer.create();
  const valueType = (field: number, [type, unit]: [string, string]) =>
    w
      .uint32((field << 3) | 2)
      .fork()
      .uint32(8)
      .int64(str(type))
      .uint32(16)
      .int64(str(unit))
      .ldelim();
  for (const t of p.sampleTypes) valueType(1, t);
  for (const s of p.samples) {
    w.uint32((2 << 3) | 2).fork();
    w.uint32((1 << 3) | 2).fork();
    for (const f of s.stack) w.uint64(locationOf(f));
    w.ldelim();
    w.uint32((2 << 3) | 2).fork();
    for (const v of s.values) w.int64(Math.round(v));
    w.ldelim();
    w.ldelim();
  }
  // One mapping that says the functions are known: pprof then tries no symbolization.
  w.uint32((3 << 3) | 2)
    .fork()
    .uint32(8)
    .uint64(1)
    .uint32(40)
    .int64(str('kubelet-ts'))
    .uint32(56)
    .bool(true)
    .uint32(64)
    .bool(true)
    .uint32(72)
    .bool(true)
    .ldelim();
  for (const loc of locations.values()) {
    w.uint32((4 << 3) | 2)
      .fork()
      .uint32(8)
      .uint64(loc.id)
      .uint32(16)
      .uint64(1)
      .uint32((4 << 3) | 2)
      .fork()
      .uint32(8)
      .uint64(loc.functionId)
      .uint32(16)
      .int64(loc.line);
    if (loc.column) w.uint32(24).int64(loc.column);
    w.ldelim().ldelim();
  }
  for (const fn of functions.values())
    w.uint32((5 << 3) | 2)
      .fork()
      .uint32(8)
      .uint64(fn.id)
      .uint32(16)
      .int64(fn.name)
      .uint32(24)
      .int64(fn.name)
      .uint32(32)
      .int64(fn.file)
      .uint32(40)
      .int64(fn.startLine)
      .ldelim();
  // Interned before the table is written: everything else is.
  const rest: [number, number][] = [];
  if (p.timeNanos) rest.push([9, p.timeNanos]);
  if (p.durationNanos) rest.push([10, p.durationNanos]);
  if (p.periodType) valueType(11, p.periodType);
  if (p.period) rest.push([12, p.period]);
  for (const c of p.comments ?? []) rest.push([13, str(c)]);
  if (p.defaultSampleType) rest.push([14, str(p.defaultSampleType)]);
  for (const s of strings.keys()) w.uint32((6 << 3) | 2).string(s);
  for (const [field, v] of rest) w.uint32(field << 3).int64(v);
  return w.finish();
}

/** As served: gzipped, as Go's runtime/pprof writes it. */
export function gzipProfile(p: Profile): Buffer {
  return gzipSync(encodeProfile(p));
}
