// The grpc probe: grpc.health.v1.Health/Check on the pod IP, plaintext, within the
// timeout; SERVING succeeds (upstream's pkg/probe/grpc, whose messages these are).
import { Client, credentials, Metadata, status as code, type ServiceError } from '@grpc/grpc-js';
import { goCodeName } from '../cri/error.ts';
import { joinHostPort } from './port.ts';
import { PROBE_USER_AGENT } from './http.ts';
import type { Outcome } from './outcome.ts';

const SERVING_STATUS = ['UNKNOWN', 'SERVING', 'NOT_SERVING', 'SERVICE_UNKNOWN'];

/** HealthCheckRequest { string service = 1; } in protobuf wire format. */
export function encodeHealthCheckRequest(service: string): Buffer {
  if (!service) return Buffer.alloc(0);
  const s = Buffer.from(service, 'utf8');
  return Buffer.concat([Buffer.from([0x0a]), varint(s.length), s]);
}

/** HealthCheckResponse { ServingStatus status = 1; }: the status number (0 when absent). */
export function decodeHealthCheckResponse(b: Buffer): number {
  let i = 0,
    status = 0;
  const readVarint = () => {
    let v = 0,
      shift = 0;
    for (;;) {
      const x = b[i++]!;
      v += (x & 0x7f) * 2 ** shift;
      if (!(x & 0x80)) return v;
      shift += 7;
    }
  };
  while (i < b.length) {
    const tag = readVarint();
    const [field, wire] = [Math.floor(tag / 8), tag & 7];
    if (wire === 0) {
      const v = readVarint();
      if (field === 1) status = v;
    } else if (wire === 2) i += readVarint();
    else if (wire === 1) i += 8;
    else if (wire === 5) i += 4;
    else break;
  }
  return status;
}

function varint(n: number): Buffer {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return Buffer.from(out);
}

export async function grpcProbe(host: string, port: number, service: string, timeoutSeconds: number): Promise<Outcome> {
  const addr = joinHostPort(host, port);
  const deadline = Date.now() + timeoutSeconds * 1000;
  const client = new Client(`dns:${addr}`, credentials.createInsecure(), { 'grpc.primary_user_agent': PROBE_USER_AGENT });
  try {
    // Upstream dials blocking until the connection is up or the timeout passes.
    const connected = await new Promise<Error | undefined>((r) => client.waitForReady(deadline, (e) => r(e ?? undefined)));
    if (connected) {
      return Date.now() >= deadline
        ? {
            result: 'failure',
            output: `timeout: failed to connect service ${JSON.stringify(addr)} within ${timeoutSeconds}s: context deadline exceeded`,
          }
        : { result: 'failure', output: `error: failed to connect service at ${JSON.stringify(addr)}: ${connected.message}` };
    }
    const status = await new Promise<number>((resolve, reject) => {
      client.makeUnaryRequest(
        '/grpc.health.v1.Health/Check',
        (x: Buffer) => x,
        (x: Buffer) => decodeHealthCheckResponse(x),
        encodeHealthCheckRequest(service),
        new Metadata(),
        { deadline },
        (e: ServiceError | null, v?: number) => (e ? reject(e) : resolve(v ?? 0)),
      );
    });
    if (status !== 1)
      return {
        result: 'failure',
        output: `service unhealthy (responded with ${JSON.stringify(SERVING_STATUS[status] ?? String(status))})`,
      };
    return { result: 'success', output: 'service is serving' };
  } catch (err) {
    const e = err as ServiceError;
    if (e.code === code.UNIMPLEMENTED)
      return {
        result: 'failure',
        output: `error: this server does not implement the grpc health protocol (grpc.health.v1.Health): ${e.details}`,
      };
    if (e.code === code.DEADLINE_EXCEEDED)
      return { result: 'failure', output: `timeout: health rpc did not complete within ${timeoutSeconds}s` };
    return {
      result: 'failure',
      output: `error: health rpc probe failed: rpc error: code = ${goCodeName(e.code)} desc = ${e.details ?? e.message}`,
    };
  } finally {
    client.close();
  }
}
