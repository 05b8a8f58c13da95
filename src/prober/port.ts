// Where a probe connects: a port by number or by the name of one of the container's
// ports (upstream's probe.ResolveContainerPort), and the static $(VAR) expansion of an
// exec probe's command (upstream's ExpandContainerCommandOnlyStatic). Pure.
import type { Container } from 'kubernetes-types/core/v1.js';

export function resolveContainerPort(port: number | string | undefined, c: Pick<Container, 'ports'>): number | { error: string } {
  let n: number;
  if (typeof port === 'number') n = port;
  else if (typeof port === 'string') {
    const named = c.ports?.find((p) => p.name === port);
    if (named) n = named.containerPort;
    // Last ditch, as upstream: a number written as a string.
    else if (/^[+-]?\d+$/.test(port)) n = Number(port);
    else return { error: `strconv.Atoi: parsing ${JSON.stringify(port)}: invalid syntax` };
  } else return { error: `intOrString had no kind: ${JSON.stringify(port)}` };
  return n > 0 && n < 65536 ? n : { error: `invalid port number: ${n}` };
}

/** $(VAR) from the container's literal env values; $$ escapes; unknown references stay as written. */
export function expandStatic(cmd: string[], env: Container['env']): string[] {
  const vars = new Map((env ?? []).filter((e) => e.value !== undefined && !e.valueFrom).map((e) => [e.name, e.value!]));
  return cmd.map((s) =>
    s.replace(/\$\$|\$\(([^)]*)\)/g, (m, name: string | undefined) => {
      if (m === '$$') return '$';
      return vars.has(name!) ? vars.get(name!)! : m;
    }),
  );
}

/** host:port as Go's net.JoinHostPort writes it. */
export const joinHostPort = (host: string, port: number) => (host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`);
