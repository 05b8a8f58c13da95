// Runs mount(8) and umount(8) for the kubelet through one long-lived sh, which forks them.
// Spawning them from the kubelet itself blocked its event loop for each one: libuv forks the
// whole node process (the page tables of ~150 MB) and waits for the exec, 10-40 ms on a quiet
// node and hundreds on a loaded one. A burst of 100 pods' volume mounts and unmounts stood
// every probe, watch and CRI answer still for 5-17 s (CPU profile of 2026-11-27: 10 s in spawn).
// sh is small, so its forks are cheap, and the kubelet's loop only writes a line to a pipe.
// Upstream's mount-utils execs mount from Go, whose clone(CLONE_VFORK) has no such cost.
import { spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import { createInterface } from 'node:readline';

/** A command that exited non-zero; output is its stdout and stderr, lines joined by spaces. */
export class CommandFailed extends Error {
  readonly code: number;
  readonly output: string;
  constructor(code: number, output: string) {
    super(output || `exit status ${code}`);
    this.code = code;
    this.output = output;
  }
}

/** Pure: one argument quoted for sh (inside single quotes nothing is special but the quote itself). */
export function shellQuote(arg: string): string {
  return `'${arg.replaceAll("'", `'\\''`)}'`;
}

/** Pure: the helper's request line for argv: an id, then the quoted command. */
export function requestLine(id: number, argv: readonly string[]): string {
  // The helper reads one line per command; mountinfo cannot show such a path either.
  const bad = argv.find((a) => /[\n\0]/.test(a));
  if (bad !== undefined) throw new Error(`argument ${JSON.stringify(bad)} contains a newline or NUL`);
  return `${id} ${argv.map(shellQuote).join(' ')}\n`;
}

/** Pure: the helper's reply line "ID CODE OUTPUT"; undefined for anything else. */
export function parseReply(line: string): { id: number; code: number; output: string } | undefined {
  const m = /^(\d+) (\d+) ?(.*)$/.exec(line);
  return m ? { id: Number(m[1]), code: Number(m[2]), output: m[3]!.trim() } : undefined;
}

// Each command runs in a background subshell, so that a slow unmount does not hold the
// others (upstream's operations run in goroutines); dash reaps them as it forks the next.
// A reply is one short line, written with one write(2), so replies do not interleave.
const HELPER = `while IFS= read -r line; do
  id=\${line%% *}; cmd=\${line#* }
  ( out=$(eval "$cmd" 2>&1 </dev/null); rc=$?
    set -f; IFS='
'; set -- $out; IFS=' '; printf '%s %s %s\\n' "$id" "$rc" "$*" ) &
done`;

type Pending = { resolve: (output: string) => void; reject: (e: Error) => void };

/** One sh that runs commands for the process; started on first use and again after it dies. */
export class CommandHelper {
  #child: ChildProcess | undefined;
  #nextId = 1;
  readonly #pending = new Map<number, Pending>();

  /** Runs argv; resolves with its output, rejects with CommandFailed when it exits non-zero. */
  run(argv: readonly string[]): Promise<string> {
    const id = this.#nextId++;
    const line = requestLine(id, argv);
    return new Promise<string>((resolve, reject) => {
      const child = this.#start();
      this.#pending.set(id, { resolve, reject });
      this.#hold(child, true);
      child.stdin!.write(line);
    });
  }

  #start(): ChildProcess {
    if (this.#child) return this.#child;
    const child = spawn('sh', ['-c', HELPER], { stdio: ['pipe', 'pipe', 'ignore'] });
    this.#child = child;
    createInterface({ input: child.stdout! }).on('line', (l) => {
      const r = parseReply(l);
      const p = r && this.#pending.get(r.id);
      if (!r || !p) return;
      this.#pending.delete(r.id);
      if (r.code === 0) p.resolve(r.output);
      else p.reject(new CommandFailed(r.code, r.output));
      if (!this.#pending.size) this.#hold(child, false);
    });
    const gone = (why: string) => {
      if (this.#child !== child) return;
      this.#child = undefined;
      for (const p of this.#pending.values()) p.reject(new Error(`the command helper (sh) ${why}`));
      this.#pending.clear();
    };
    child.on('error', (e) => gone(`failed: ${e.message}`));
    child.on('exit', (code, signal) => gone(`exited (${signal ?? code})`));
    child.stdin!.on('error', () => {
      /* the exit above says why */
    });
    return child;
  }

  /** An idle helper does not keep the process alive; one with commands in flight does. */
  #hold(child: ChildProcess, busy: boolean) {
    for (const h of [child, child.stdin as Socket | null, child.stdout as Socket | null]) {
      if (busy) h?.ref();
      else h?.unref();
    }
  }
}

const helper = new CommandHelper();

/** Runs argv through the process's command helper (see above). */
export const runCommand = (argv: readonly string[]): Promise<string> => helper.run(argv);
