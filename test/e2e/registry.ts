// A small OCI distribution registry for tests (no outside registry is reachable): it
// serves one image, read from an OCI image-layout tarball, under one repository name,
// over plain HTTP, and only to clients that send the right HTTP basic credentials.
// privateBusybox sets one up on the stack's node for a test: busybox under a name containerd
// has never seen, and containerd told how to reach it.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BUSYBOX,
  CONTAINERD_CONFIG,
  NODE_IP,
  ROOT,
  crictl,
  ctr,
  exportImage,
  forgetPulledImage,
  imageId,
  reimportImages,
} from './stack.ts';

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

// hack/containerd.sh points containerd's CRI registry config_path here; containerd reads
// a registry's hosts.toml at each pull, so a test can add its own.
const CERTS_D = join(ROOT, '_output/local/containerd/certs.d');

export interface PrivateImage {
  registry: Registry;
  /** busybox's name on the registry, with a tag of this run. */
  image: string;
  username: string;
  password: string;
  /** The Authorization header of the right credentials. */
  rightAuth: string;
  /** A temporary directory of the test's own (the exported layout is in it). */
  work: string;
  /**
   * Closes the registry, removes its hosts.toml, the work directory, the image's name on the node
   * and the kubelet's record of pulling it (stack.ts forgetPulledImage).
   */
  close(): Promise<void>;
}

/**
 * A registry served on the node IP, plain HTTP, wanting HTTP basic credentials of this run,
 * holding the busybox image exported from containerd, and containerd's hosts.toml for it.
 * workPrefix names the test's temporary directory.
 */
export async function privateBusybox(workPrefix: string): Promise<PrivateImage> {
  // containerd 1.6 reports its registry config in `crictl info`; 2.x does not, so its config file says.
  const configPath =
    JSON.parse(crictl('info')).config?.registry?.configPath ??
    /^\s*config_path = "(.*)"$/m.exec(readFileSync(CONTAINERD_CONFIG, 'utf8'))?.[1];
  assert.equal(
    configPath,
    CERTS_D,
    'containerd must run with the registry config_path of hack/containerd.sh (run it to restart containerd)',
  );

  const work = mkdtempSync(join(tmpdir(), workPrefix));
  const tag = `run-${randomBytes(4).toString('hex')}`;
  const username = `e2e-${randomBytes(3).toString('hex')}`;
  const password = randomBytes(12).toString('base64url');
  const serve = () => {
    exportImage(BUSYBOX, `${work}/busybox.tar`);
    return startRegistry({
      host: NODE_IP,
      layout: readFileSync(`${work}/busybox.tar`),
      repository: 'e2e/busybox',
      tags: [tag],
      username,
      password,
    });
  };
  // The image GC test before image-pull-secrets' removes images that share busybox's blobs; once
  // (a CI run of 2b66c1a) the export then lacked its manifest, which startRegistry refuses. The
  // fixture is imported again then.
  const registry = await serve().catch(() => {
    reimportImages();
    return serve();
  });
  const image = `${registry.address}/e2e/busybox:${tag}`;
  const hostsDir = `${CERTS_D}/${registry.address}`;
  mkdirSync(hostsDir, { recursive: true });
  writeFileSync(
    `${hostsDir}/hosts.toml`,
    `server = "http://${registry.address}"\n\n[host."http://${registry.address}"]\n  capabilities = ["pull", "resolve"]\n`,
  );
  return {
    registry,
    image,
    username,
    password,
    rightAuth: `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`,
    work,
    async close() {
      await registry.close();
      rmSync(hostsDir, { recursive: true, force: true });
      rmSync(work, { recursive: true, force: true });
      // busybox's ID became a kubelet-pulled image (KEP-2535): preloaded again for the tests after.
      try {
        forgetPulledImage(imageId(image));
      } catch {
        /* never pulled */
      }
      // Not crictl rmi: CRI RemoveImage drops every name of the image, and this one shares
      // its digest with the busybox the other tests use. ctr removes just this name.
      try {
        ctr('images', 'rm', image);
      } catch {
        /* never pulled */
      }
    },
  };
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
