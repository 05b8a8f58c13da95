import { CriConnection, type CallOptions, type ConnectionOptions, type RequestOf, type ResponseOf, type Rpc } from './connection.ts';
import type { ImageServiceDefinition } from './generated/runtime/v1/ImageService.ts';
import { criServices } from './proto.ts';

type Methods = ImageServiceDefinition;
export type ImageRequest<M extends keyof Methods> = RequestOf<Methods[M]>;
export type ImageResponse<M extends keyof Methods> = ResponseOf<Methods[M]>;

const read = (operation: string): Rpc => ({ operation, timeoutMs: 10_000, idempotent: true });

// Operation names are upstream's operation_type metric labels.
const RPC = {
  ListImages: read('list_images'),
  ImageStatus: read('image_status'),
  // No deadline, as upstream's remote image service: a pull is bounded by the runtime's own
  // progress timeout (containerd's image_pull_progress_timeout), and cancelled with its pod
  // through the call's signal. Infinity is grpc-js's "no deadline".
  PullImage: { operation: 'pull_image', timeoutMs: Number.POSITIVE_INFINITY, idempotent: false },
  // runtimeRequestTimeout, the connection's.
  RemoveImage: { operation: 'remove_image', idempotent: false },
  ImageFsInfo: read('image_fs_info'),
} satisfies { [M in keyof Methods]?: Rpc };

/** CRI ImageService over a unix socket; every method rejects with a CriError. */
export class ImageClient {
  readonly #connection: CriConnection;
  readonly #methods = criServices().image;

  /** endpoint: unix:///run/containerd/containerd.sock or a bare socket path. */
  constructor(endpoint: string, options?: ConnectionOptions) {
    this.#connection = new CriConnection(endpoint, options);
  }

  get target(): string {
    return this.#connection.target;
  }

  listImages(request: ImageRequest<'ListImages'> = {}, options?: CallOptions) {
    return this.#call('ListImages', request, options);
  }

  /** Resolves with image null (not an error) when the image is not present. */
  imageStatus(request: ImageRequest<'ImageStatus'>, options?: CallOptions) {
    return this.#call('ImageStatus', request, options);
  }

  pullImage(request: ImageRequest<'PullImage'>, options?: CallOptions) {
    return this.#call('PullImage', request, options);
  }

  removeImage(request: ImageRequest<'RemoveImage'>, options?: CallOptions) {
    return this.#call('RemoveImage', request, options);
  }

  imageFsInfo(request: ImageRequest<'ImageFsInfo'> = {}, options?: CallOptions) {
    return this.#call('ImageFsInfo', request, options);
  }

  close(): void {
    this.#connection.close();
  }

  #call<M extends keyof typeof RPC>(method: M, request: ImageRequest<M>, options?: CallOptions): Promise<ImageResponse<M>> {
    return this.#connection.call(this.#methods[method], RPC[method], request, options?.timeoutMs, options?.signal);
  }
}
