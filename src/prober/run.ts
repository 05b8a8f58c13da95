// Runs one probe with the handler its spec names, against one container instance.
// A probe that could not run (an error, not a failure) is tried up to 3 times, as upstream.
import type { Container, Probe } from 'kubernetes-types/core/v1.js';
import { execProbe, type ExecRunner } from './exec.ts';
import { httpProbe, httpProbeRequest } from './http.ts';
import { tcpProbe } from './tcp.ts';
import { grpcProbe } from './grpc.ts';
import { expandStatic, resolveContainerPort } from './port.ts';
import type { Outcome } from './outcome.ts';

export interface ProbeSubject {
  podName: string;
  container: Container;
  containerId: string;
  podIP?: string;
}

const MAX_TRIES = 3;

export async function runProbe(cri: ExecRunner, p: Probe, s: ProbeSubject, timeoutSeconds: number): Promise<Outcome> {
  let o: Outcome = { result: 'unknown', output: '' };
  for (let i = 0; i < MAX_TRIES; i++) {
    o = await runOnce(cri, p, s, timeoutSeconds);
    if (o.error === undefined) return o;
  }
  return o;
}

async function runOnce(cri: ExecRunner, p: Probe, s: ProbeSubject, timeoutSeconds: number): Promise<Outcome> {
  const unknown = (error: string): Outcome => ({ result: 'unknown', output: '', error });
  if (p.exec) return execProbe(cri, s.containerId, expandStatic(p.exec.command ?? [], s.container.env), timeoutSeconds);
  if (p.httpGet) {
    const req = httpProbeRequest(p.httpGet, s.container, s.podIP);
    return 'error' in req ? unknown(req.error) : httpProbe(req, timeoutSeconds);
  }
  if (p.tcpSocket) {
    const port = resolveContainerPort(p.tcpSocket.port, s.container);
    const host = p.tcpSocket.host || s.podIP;
    if (typeof port !== 'number') return unknown(port.error);
    return host ? tcpProbe(host, port, timeoutSeconds) : unknown('the pod has no IP address yet');
  }
  if (p.grpc) {
    if (!s.podIP) return unknown('the pod has no IP address yet');
    return grpcProbe(s.podIP, p.grpc.port, p.grpc.service ?? '', timeoutSeconds);
  }
  return unknown(`missing probe handler for ${s.podName}:${s.container.name}`);
}
