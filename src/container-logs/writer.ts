// What of each record reaches the client, as upstream's logWriter decides it: records
// older than `since` are skipped, `timestamps` prefixes each line (not the continuations
// of partial records), and `limitBytes` cuts the output, prefixes included.
import { formatTimestamp, type LogMessage } from './cri-log.ts';

export interface LogOptions {
  follow?: boolean;
  /** The last N lines only (a line being a full record and the partial ones before it). */
  tailLines?: number;
  limitBytes?: number;
  /** Skip records older than this, in nanoseconds since the epoch. */
  sinceNs?: bigint;
  timestamps?: boolean;
}

export class LogWriter {
  private readonly opts: LogOptions;
  private remaining: number;
  private atLineStart = true;

  constructor(opts: LogOptions) {
    this.opts = opts;
    this.remaining = opts.limitBytes ?? Infinity;
  }

  /** The bytes to send for a record (maybe none). */
  render(msg: LogMessage): Buffer | undefined {
    const lineStart = this.atLineStart;
    this.atLineStart = msg.content.length === 0 || msg.content[msg.content.length - 1] === 0x0a;
    if (this.done || (this.opts.sinceNs !== undefined && msg.timeNs < this.opts.sinceNs)) return undefined;
    let out =
      this.opts.timestamps && lineStart
        ? Buffer.concat([Buffer.from(formatTimestamp(msg.timestamp) + ' ', 'latin1'), msg.content])
        : msg.content;
    if (out.length > this.remaining) out = out.subarray(0, this.remaining);
    this.remaining -= out.length;
    return out;
  }

  /** limitBytes is reached: nothing more will be sent. */
  get done(): boolean {
    return this.remaining <= 0;
  }
}
