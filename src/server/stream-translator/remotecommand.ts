// exec and attach over WebSocket (v5.channel.k8s.io) translated to the runtime's SPDY
// remotecommand (ExtendWebSocketsToKubelet, beta and on in 1.36): upstream's
// StreamTranslatorHandler (k8s.io/apiserver/pkg/util/proxy/streamtranslator.go), which the
// kubelet's getExec and getAttach put in front of the runtime's URL. The client's channels
// (0 stdin, 1 stdout, 2 stderr, 3 error, 4 resize; 255 closes one) become SPDY streams named by
// their streamType header, created in client-go's order (error, stdin, stdout, stderr or
// resize); the runtime's status on the error stream comes back as the v5 client reads it.
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { CLOSE_WAIT_MS, closeFrame, encodeFrame, handshakeResponse, MessageReader, OPCODE } from './websocket.ts';
import { dataFrames, type Frame, FrameReader, goAway, headerBlock, ping, storedBlocks, synStream, TYPE } from './spdy.ts';
import { relay } from './relay.ts';
import { readBody, upgradeErrorMessage, upgradedToSpdy, upgradeToSpdy } from './upgrade.ts';

export const V5 = 'v5.channel.k8s.io';
/** What the translator offers the runtime, newest first: v5 and v4 share the v4 error stream. */
const SPDY_PROTOCOLS = [V5, 'v4.channel.k8s.io'];
const CHANNEL = { stdin: 0, stdout: 1, stderr: 2, error: 3, resize: 4, close: 255 } as const;
/** Upstream's defaultIdleConnectionTimeout for the WebSocket. */
const IDLE_TIMEOUT_MS = 4 * 3600_000;

export type StreamOptions = { stdin: boolean; stdout: boolean; stderr: boolean; tty: boolean };

type Status = Record<string, unknown>;
const internalError = (message: string): Status => ({
  metadata: {},
  status: 'Failure',
  message: `Internal error occurred: ${message}`,
  reason: 'InternalError',
  details: { causes: [{ message }] },
  code: 500,
});

/**
 * Pure: the v5 status for what the runtime wrote on its error stream: client-go's
 * errorDecoderV4, then the translator's codeExitToStatusError or NewInternalError.
 */
export function translatedStatus(errorStream: Buffer): Status {
  if (!errorStream.length) return { metadata: {}, status: 'Success' };
  let s: { status?: string; reason?: string; message?: string; details?: { causes?: { reason?: string; message?: string }[] } };
  try {
    s = JSON.parse(errorStream.toString());
  } catch (e) {
    return internalError(`error stream protocol error: ${(e as Error).message} in ${JSON.stringify(errorStream.toString())}`);
  }
  if (s.status === 'Success') return { metadata: {}, status: 'Success' };
  if (s.status !== 'Failure') return internalError('error stream protocol error: unknown error');
  if (s.reason !== 'NonZeroExitCode') return internalError(s.message ?? '');
  if (!s.details) return internalError('error stream protocol error: details must be set');
  const cause = s.details.causes?.find((c) => c.reason === 'ExitCode');
  if (!cause) return internalError('error stream protocol error: no ExitCode cause given');
  const text = cause.message ?? '';
  const rc = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!(rc <= 255)) return internalError(`error stream protocol error: invalid exit code value ${JSON.stringify(text)}`);
  return {
    metadata: {},
    status: 'Failure',
    message: `command terminated with non-zero exit code: command terminated with exit code ${rc}`,
    reason: 'NonZeroExitCode',
    details: { causes: [{ reason: 'ExitCode', message: String(rc) }] },
  };
}

type StreamType = 'error' | 'stdin' | 'stdout' | 'stderr' | 'resize';

/**
 * Pure: the SPDY streams client-go opens for these options, in its order, with their ids (odd,
 * from 1) and the WebSocket channel each carries.
 */
export function plannedStreams(o: StreamOptions): { type: StreamType; id: number; channel: number }[] {
  const types = [
    'error' as const,
    ...(o.stdin ? ['stdin' as const] : []),
    ...(o.stdout ? ['stdout' as const] : []),
    ...(o.stderr && !o.tty ? ['stderr' as const] : []),
    ...(o.tty ? ['resize' as const] : []),
  ];
  return types.map((type, i) => ({ type, id: 2 * i + 1, channel: CHANNEL[type] }));
}

/**
 * Serves one WebSocket exec or attach (the request checked and its runtime URL in hand) to its
 * end: the status on the error channel, then a close. socket is the client's upgraded
 * connection, head what it sent past the request's head.
 */
export async function translateRemoteCommand(
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  target: URL,
  o: StreamOptions,
): Promise<void> {
  const accept = handshakeResponse(req.headers, V5);
  if (!accept) {
    socket.end('HTTP/1.1 400 Bad Request\r\nSec-WebSocket-Version: 13\r\nConnection: close\r\n\r\n');
    return;
  }
  socket.write(accept);
  let runtime: Socket | undefined;
  (socket as Socket).setTimeout?.(IDLE_TIMEOUT_MS, () => socket.destroy());
  const send = (channel: number, data: Buffer = Buffer.alloc(0)) => {
    const frame = encodeFrame(OPCODE.binary, Buffer.concat([Buffer.from([channel]), data]));
    if (runtime) relay(runtime, socket, frame);
    else if (!socket.destroyed) socket.write(frame);
  };
  // wsstream's first write, which tells the client the streams are up.
  send(o.stdout ? CHANNEL.stdout : o.stderr ? CHANNEL.stderr : CHANNEL.error);

  let finished = false;
  const finish = (status: Status) => {
    if (finished) return;
    finished = true;
    send(CHANNEL.error, Buffer.from(JSON.stringify(status)));
    if (!socket.destroyed) socket.end(closeFrame());
    if (runtime && !runtime.destroyed) runtime.end(goAway(0));
    // wsstream's Close shuts the connection: a client that does not answer the close frame is
    // not waited for past a moment to flush it.
    setTimeout(() => socket.destroy(), CLOSE_WAIT_MS).unref();
  };
  const closed = new Promise<void>((resolve) => socket.once('close', resolve));
  socket.once('close', () => runtime?.destroy());

  // The client's messages: held until the runtime's streams are open.
  const streams = plannedStreams(o);
  const byChannel = new Map(streams.map((s) => [s.channel, s]));
  const byId = new Map(streams.map((s) => [s.id, s]));
  const early: Buffer[] = [];
  const toRuntime = (frame: Buffer) => {
    if (runtime) relay(socket, runtime, frame);
    else early.push(frame);
  };
  const reader = new MessageReader();
  let stdinClosed = false;
  const onMessage = (opcode: number, data: Buffer) => {
    if (opcode === OPCODE.close) return socket.end(closeFrame());
    if (opcode === OPCODE.ping) return socket.write(encodeFrame(OPCODE.pong, data));
    if (opcode !== OPCODE.binary && opcode !== OPCODE.text) return;
    if (!data.length) return;
    // v5's close signal, [255, channel]: the client is done with stdin (a half-close, SPDY's FIN).
    if (data[0] === CHANNEL.close) {
      if (data.length !== 2) return socket.destroy();
      const stdin = byChannel.get(data[1]!);
      if (stdin?.type === 'stdin' && !stdinClosed) {
        stdinClosed = true;
        toRuntime(dataFrames(stdin.id, Buffer.alloc(0), true));
      }
      return;
    }
    // Data for stdin (until closed) or a resize; the other channels are the kubelet's to write.
    const stream = byChannel.get(data[0]!);
    if (stream?.type === 'resize' || (stream?.type === 'stdin' && !stdinClosed)) toRuntime(dataFrames(stream.id, data.subarray(1)));
  };
  const onClientData = (chunk: Buffer) => {
    try {
      for (const m of reader.push(chunk)) onMessage(m.opcode, m.data);
    } catch {
      socket.destroy();
    }
  };
  socket.on('data', onClientData);
  if (head.length) onClientData(head);

  let rest: Buffer;
  try {
    const r = await upgradeToSpdy(target, SPDY_PROTOCOLS);
    if (socket.destroyed) {
      r.conn.destroy();
      return;
    }
    if (!upgradedToSpdy(r)) {
      finish(internalError(`unable to upgrade connection: ${upgradeErrorMessage(await readBody(r))}`));
      return await closed;
    }
    runtime = r.conn;
    rest = r.rest;
  } catch (e) {
    finish(internalError((e as Error).message));
    return await closed;
  }

  // The streams, then what the client sent meanwhile.
  let first = true;
  for (const s of streams) {
    runtime.write(synStream(s.id, storedBlocks(headerBlock({ streamtype: s.type }), first)));
    first = false;
  }
  for (const frame of early.splice(0)) relay(socket, runtime, frame);

  // The runtime's frames: output to its channel, the error stream kept for the end. The end is
  // when output and error streams are all closed, or the connection is.
  const open = new Set(streams.filter((s) => s.type === 'error' || s.type === 'stdout' || s.type === 'stderr').map((s) => s.id));
  let errorStream = Buffer.alloc(0);
  const frames = new FrameReader();
  const end = (id: number) => {
    open.delete(id);
    if (!open.size) finish(translatedStatus(errorStream));
  };
  runtime.on('data', (chunk: Buffer) => {
    let got: Frame[];
    try {
      got = frames.push(chunk);
    } catch (e) {
      return finish(internalError((e as Error).message));
    }
    for (const f of got) {
      if (f.kind === 'data') {
        const stream = byId.get(f.streamId);
        if (stream?.type === 'error') errorStream = Buffer.concat([errorStream, f.data]);
        else if ((stream?.type === 'stdout' || stream?.type === 'stderr') && f.data.length) send(stream.channel, f.data);
        if (f.fin) end(f.streamId);
      } else if (f.type === TYPE.ping && f.ping !== undefined && f.ping % 2 === 0) runtime!.write(ping(f.ping));
      else if (f.type === TYPE.rstStream || ((f.type === TYPE.synReply || f.type === TYPE.headers) && f.fin)) end(f.streamId);
    }
  });
  runtime.once('close', () => finish(translatedStatus(errorStream)));
  if (rest.length) runtime.emit('data', rest);
  runtime.resume();
  await closed;
}
