// client-go's token bucket (util/flowcontrol): burst tokens at once, refilled at qps per second.
// The kubelet's client-side limits are such buckets: kubeAPIQPS/kubeAPIBurst,
// eventRecordQPS/eventBurst, registryPullQPS/registryBurst, and the event spam filter.
export class TokenBucket {
  readonly #qps: number;
  readonly #burst: number;
  readonly #now: () => number;
  #tokens: number;
  #atMs: number;

  /** qps <= 0: unlimited (the kubelet's configuration says 0 is no limit). */
  constructor(qps: number, burst: number, now: () => number = Date.now) {
    this.#qps = qps;
    this.#burst = Math.max(1, burst);
    this.#now = now;
    this.#tokens = this.#burst;
    this.#atMs = now();
  }

  #refill(): void {
    const now = this.#now();
    this.#tokens = Math.min(this.#burst, this.#tokens + ((now - this.#atMs) / 1000) * this.#qps);
    this.#atMs = now;
  }

  /** TryAccept: a token now, or false (nothing taken). */
  tryAccept(): boolean {
    if (this.#qps <= 0) return true;
    this.#refill();
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }

  /** Accept's reservation: takes the next token, returning how long (ms) to wait until it is due. */
  reserve(): number {
    if (this.#qps <= 0) return 0;
    this.#refill();
    this.#tokens -= 1;
    return this.#tokens >= 0 ? 0 : Math.ceil((-this.#tokens / this.#qps) * 1000);
  }
}
