// A small OCI distribution registry for tests (no outside registry is reachable): it
// serves one image, read from an OCI image-layout tarball, under one repository name,
// over plain HTTP, and only to clients that send the right HTTP basic credentials.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash } from 'node:crypto';

export interface RegistryOptions {
  host: string;
  /** 0 (the default) picks a free port. */
  port?: number;
  /** An OCI image-layout tar (`ctr images export`) holding one image manifest. */
  layout: Buffer;
  repository: string;
  tags: string[];
  username: string;
  password: string;
}

export interface RegistryRequest {
  method: string;
  path: string;
  authorization?: string;
  status: number;
}

export interface Registry {
  /** host:port, as image names and containerd's hosts.toml name it. */
  address: string;
  port: number;
  manifestDigest: string;
  /** Every request, in order, with the Authorization header it carried. */
  requests: RegistryRequest[];
  close(): Promise<void>;
}

interface Blob {
  data: Buffer;
  mediaType: string;
}

export async function startRegistry(o: RegistryOptions): Promise<Registry> {
  const files = untar(o.layout);
  const blob = (digest: string) => files.get(`blobs/${digest.replace(':', '/')}`);
  const index = JSON.parse(files.get('index.json')?.toString('utf8') ?? 'null') as {
    manifests?: { mediaType: string; digest: string }[];
  } | null;
  const top = index?.manifests?.[0];
  if (!top || !blob(top.digest)) throw new Error('the layout tar has no index.json naming a manifest it contains');
  const manifests = new Map<string, Blob>([[top.digest, { data: blob(top.digest)!, mediaType: top.mediaType }]]);
  const expected = `Basic ${Buffer.from(`${o.username}:${o.password}`).toString('base64')}`;
  const requests: RegistryRequest[] = [];

  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://registry').pathname;
    const done = (status: number) => requests.push({ method: req.method ?? '', path, authorization: req.headers.authorization, status });
    res.setHeader('Docker-Distribution-API-Version', 'registry/2.0');
    if (req.headers.authorization !== expected) {
      res.setHeader('WWW-Authenticate', 'Basic realm="kubelet-ts e2e registry"');
      return done(error(res, req, 401, 'UNAUTHORIZED', 'authentication required'));
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') return done(error(res, req, 405, 'UNSUPPORTED', 'this registry is read-only'));
    if (path === '/v2/' || path === '/v2') return done(send(res, req, Buffer.from('{}'), 'application/json'));
    const m = /^\/v2\/(.+)\/(manifests|blobs)\/([^/]+)$/.exec(path);
    if (!m || m[1] !== o.repository) return done(error(res, req, 404, 'NAME_UNKNOWN', 'repository name not known to registry'));
    const [, , kind, ref] = m as unknown as [string, string, string, string];
    if (kind === 'manifests') {
      const digest = o.tags.includes(ref) ? top.digest : ref;
      const found = manifests.get(digest);
      if (!found) return done(error(res, req, 404, 'MANIFEST_UNKNOWN', 'manifest unknown'));
      return done(send(res, req, found.data, found.mediaType, digest));
    }
    const data = blob(ref);
    if (!data || !/^sha256:[0-9a-f]{64}$/.test(ref)) return done(error(res, req, 404, 'BLOB_UNKNOWN', 'blob unknown to registry'));
    return done(send(res, req, data, 'application/octet-stream', ref));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port ?? 0, o.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    address: `${o.host}:${port}`,
    port,
    manifestDigest: top.digest,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function send(res: ServerResponse, req: IncomingMessage, body: Buffer, contentType: string, digest?: string): number {
  res.statusCode = 200;
  res.setHeader('Content-Type', contentType);
  res.setHeader('Content-Length', body.length);
  if (digest) res.setHeader('Docker-Content-Digest', digest);
  res.end(req.method === 'HEAD' ? undefined : body);
  return 200;
}

function error(res: ServerResponse, req: IncomingMessage, status: number, code: string, message: string): number {
  const body = Buffer.from(JSON.stringify({ errors: [{ code, message }] }));
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json');
  res.setHeader('Content-Length', body.length);
  res.end(req.method === 'HEAD' ? undefined : body);
  return status;
}

/** The regular files of a ustar archive by path ("./" dropped); enough for `ctr images export`. */
export function untar(tar: Buffer): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  const str = (from: number, len: number) =>
    tar
      .subarray(from, from + len)
      .toString('utf8')
      .replace(/\0.*$/s, '');
  let longName: string | undefined;
  for (let off = 0; off + 512 <= tar.length; ) {
    const header = tar.subarray(off, off + 512);
    if (header.every((b) => b === 0)) break;
    const size = parseInt(str(off + 124, 12).trim() || '0', 8);
    const type = String.fromCharCode(header[156]!);
    const prefix = str(off + 345, 155);
    const name = longName ?? (prefix ? `${prefix}/${str(off, 100)}` : str(off, 100));
    const data = tar.subarray(off + 512, off + 512 + size);
    longName = undefined;
    if (type === 'L') longName = data.toString('utf8').replace(/\0.*$/s, '');
    else if (type === '0' || type === '\0') files.set(name.replace(/^\.\//, ''), Buffer.from(data));
    off += 512 + Math.ceil(size / 512) * 512;
  }
  return files;
}

/** Checks what the layout claims: every blob's bytes hash to its name. */
export function verifyLayout(files: Map<string, Buffer>): string[] {
  const bad: string[] = [];
  for (const [name, data] of files) {
    const m = /^blobs\/sha256\/([0-9a-f]{64})$/.exec(name);
    if (m && createHash('sha256').update(data).digest('hex') !== m[1]) bad.push(name);
  }
  return bad;
}
