// Runs a credential provider plugin once, as upstream's execPlugin.ExecPlugin:
//   ENV=VALUE <bin-dir>/<name> args... <<<request
// with the kubelet's environment plus the config's env (the config's win), a timeout of one
// minute, and the response read from stdout and checked.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { decodeResponse, encodeRequest, type PluginRequest, type PluginResponse } from './protocol.ts';

/** One call of a plugin; rejects with upstream's message. The seam the provider's tests replace. */
export type ExecPlugin = (request: PluginRequest) => Promise<PluginResponse>;

/** Upstream's kubelet_credential_provider_plugin_duration and _errors_total. */
export interface PluginObserver {
  duration?(plugin: string, seconds: number): void;
  error?(plugin: string): void;
}

export interface ExecOptions {
  name: string;
  binDir: string;
  apiVersion: string;
  args: readonly string[];
  env: readonly { name: string; value: string }[];
  /** Upstream's catch-all timeout for exec plugins: one minute. */
  timeoutMs?: number;
  environ?: NodeJS.ProcessEnv;
  observe?: PluginObserver;
}

export function execPlugin(o: ExecOptions): ExecPlugin {
  const timeoutMs = o.timeoutMs ?? 60_000;
  return async (request) => {
    const env: NodeJS.ProcessEnv = { ...(o.environ ?? process.env) };
    for (const v of o.env) env[v.name] = v.value;
    const started = performance.now();
    let result: { stdout: string; stderr: string };
    try {
      result = await run(join(o.binDir, o.name), o.args, env, encodeRequest(o.apiVersion, request), timeoutMs);
    } catch (e) {
      o.observe?.error?.(o.name);
      const { cause, stderr } = e as RunError;
      throw new Error(`error execing credential provider plugin ${o.name} for image ${request.image}: ${cause}: ${stderr}`);
    } finally {
      o.observe?.duration?.(o.name, (performance.now() - started) / 1000);
    }
    return decodeResponse(o.apiVersion, result.stdout);
  };
}

interface RunError {
  cause: string;
  stderr: string;
}

// Go's exec error words: "exit status N", "signal: killed", the start error, or the context's.
function run(bin: string, args: readonly string[], env: NodeJS.ProcessEnv, stdin: string, timeoutMs: number) {
  return new Promise<{ stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(bin, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    // A plugin that exits without reading its stdin is not an error of the kubelet's.
    child.stdin.on('error', () => {});
    child.stdin.end(stdin);
    child.on('error', (e: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject({
        cause: `fork/exec ${bin}: ${e.code === 'ENOENT' ? 'no such file or directory' : e.message}`,
        stderr: '',
      } satisfies RunError);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const stderr = Buffer.concat(err).toString('utf8');
      if (timedOut) reject({ cause: 'context deadline exceeded', stderr } satisfies RunError);
      else if (signal) reject({ cause: `signal: ${signal === 'SIGKILL' ? 'killed' : signal}`, stderr } satisfies RunError);
      else if (code !== 0) reject({ cause: `exit status ${code}`, stderr } satisfies RunError);
      else resolve({ stdout: Buffer.concat(out).toString('utf8'), stderr });
    });
  });
}
