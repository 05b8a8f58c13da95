// EnvFiles (beta in 1.36, on by default): an env var's valueFrom.fileKeyRef names a key
// in a file of one of the pod's volumes (an emptyDir an init container wrote). The file
// is upstream's strict subset of POSIX shell (ParseEnv, pkg/kubelet/util/env/env_util.go):
// KEY='value' lines, single quotes required, no expansion. Pure: the lines come in as an
// (async) iterable, read at the edge (env-file-source.ts), and parsing stops at the key.
import type { Container, EnvVar } from 'kubernetes-types/core/v1.js';
import { goQuote } from '../log/go-quote.ts';

/** v1.FileKeySelector: newer (1.34) than kubernetes-types' EnvVarSource. */
export interface FileKeySelector {
  /** The pod volume holding the file. */
  volumeName: string;
  /** The file, relative to the volume. */
  path: string;
  key: string;
  /** A key the file lacks (or sets empty) leaves the variable out instead of failing. */
  optional?: boolean;
}

/**
 * The env var's fileKeyRef when makeEnvironmentVariables would read it: no literal value,
 * and none of the sources its switch tries first.
 */
export function fileKeyRefOf(e: EnvVar): FileKeySelector | undefined {
  const vf = e.valueFrom;
  if (e.value || !vf || vf.fieldRef || vf.resourceFieldRef || vf.configMapKeyRef || vf.secretKeyRef) return undefined;
  return (vf as { fileKeyRef?: FileKeySelector }).fileKeyRef;
}

/** Which files and keys a container's env reads: what the edge must read. */
export const fileKeyRefs = (c: Container): FileKeySelector[] => (c.env ?? []).flatMap((e) => fileKeyRefOf(e) ?? []);

/** How one fileKeyRef is found in EnvInputs.fileKeys. */
export const fileKeyId = (f: FileKeySelector) => JSON.stringify([f.volumeName, f.path, f.key]);

/** One fileKeyRef as the edge read it. */
export type FileKeyRead =
  /** The pod has no such volume set up. */
  | { noVolume: true }
  /** The path could not be joined to the volume (SecureJoin's error, passed on as is). */
  | { error: string }
  /** path: the file on the host; a failed parse keeps ParseEnv's reason (for the log). */
  | { path: string; value: string }
  | { path: string; parseError: string };

/** A line of the file, or why reading stopped (bufio.Scanner's error). */
export type ScannedLine = string | { readError: string };

/** bufio.MaxScanTokenSize: a longer line stops the scan. */
export const MAX_LINE_BYTES = 64 * 1024;

/**
 * bufio.ScanLines over the file's bytes: lines split at \n, one trailing \r dropped, a
 * last line without \n kept. A line that does not fit bufio.Scanner's 64 KiB buffer with
 * its newline (>= MAX_LINE_BYTES) ends the scan with "token too long", as upstream.
 */
export async function* scanLines(chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): AsyncGenerator<ScannedLine> {
  let pending = Buffer.alloc(0);
  const line = (b: Buffer) => (b.at(-1) === 0x0d ? b.subarray(0, -1) : b).toString('utf8');
  const tooLong = { readError: 'bufio.Scanner: token too long' };
  try {
    for await (const chunk of chunks) {
      pending = pending.length ? Buffer.concat([pending, chunk]) : Buffer.from(chunk);
      let nl: number;
      while ((nl = pending.indexOf(0x0a)) >= 0) {
        if (nl >= MAX_LINE_BYTES) {
          yield tooLong;
          return;
        }
        yield line(pending.subarray(0, nl));
        pending = pending.subarray(nl + 1);
      }
      if (pending.length >= MAX_LINE_BYTES) {
        yield tooLong;
        return;
      }
    }
  } catch (e) {
    yield { readError: (e as Error).message };
    return;
  }
  if (pending.length) yield line(pending);
}

export type ParseResult = { value: string } | { error: string };

const trimLeft = (s: string) => s.replace(/^[ \t]+/, '');
const trimRight = (s: string) => s.replace(/[ \t]+$/, '');

/**
 * ParseEnv: the value of key, '' when the file does not set it (or sets it to '' or with
 * blanks after '='), or ParseEnv's error for the first malformed line before the key.
 *
 *   - KEY='value': the quotes are required and keep everything literally, newlines too;
 *     blanks and a # comment may follow the closing quote
 *   - leading blanks, blank lines and # comment lines are skipped (outside quotes)
 *   - blanks before '=' are an error; blanks after it assign '' (KEY= 'x' is empty, as in sh)
 *   - the first assignment of the key wins
 *
 * file names the file in the read error's text.
 */
export async function parseEnv(lines: AsyncIterable<ScannedLine> | Iterable<ScannedLine>, key: string, file: string): Promise<ParseResult> {
  const invalid = (n: number, why: string) => ({ error: `invalid environment variable format at line ${n}: ${why}` });
  let lineNum = 0;
  // Inside a quoted value: whose, what of it so far (only the key's is kept), where it began.
  let open: { name: string; value: string; start: number } | undefined;
  let readError: string | undefined;
  for await (const item of lines) {
    if (typeof item !== 'string') {
      readError = item.readError;
      break;
    }
    lineNum++;
    let rest: string;
    if (open) {
      rest = item;
    } else {
      const line = trimLeft(item);
      if (line === '' || line.startsWith('#')) continue;
      const eq = line.indexOf('=');
      if (eq < 0) return invalid(lineNum, "missing '='");
      const namePart = line.slice(0, eq);
      const name = trimRight(namePart);
      if (name === '') return invalid(lineNum, 'empty variable name');
      if (name !== namePart) return invalid(lineNum, "whitespace before '=' is not allowed");
      const valuePart = line.slice(eq + 1);
      const value = trimLeft(valuePart);
      if (value !== valuePart) {
        if (name === key) return { value: '' };
        continue;
      }
      if (!value.startsWith("'")) return invalid(lineNum, 'value must be enclosed in single quotes');
      open = { name, value: '', start: lineNum };
      rest = value.slice(1);
    }
    const close = rest.indexOf("'");
    if (close < 0) {
      if (open.name === key) open.value += rest + '\n';
      continue;
    }
    const after = trimLeft(rest.slice(close + 1));
    if (after !== '' && !after.startsWith('#')) return invalid(lineNum, 'unexpected content after closing quote');
    if (open.name === key) return { value: open.value + rest.slice(0, close) };
    open = undefined;
  }
  if (open) return { error: `invalid environment variable format starting at line ${open.start}: unclosed single quote` };
  if (readError !== undefined) return { error: `error reading environment variable file ${goQuote(file)}: ${readError}` };
  return { value: '' };
}

/** ParseEnv over a whole file's content. */
export const parseEnvContent = (content: string | Uint8Array, key: string, file = 'env') =>
  parseEnv(scanLines([typeof content === 'string' ? Buffer.from(content) : content]), key, file);
