// Where the last N lines of a CRI log file start, found by reading backwards in chunks
// so that a large file is never read whole. Unlike upstream's tail.FindTailLineStartIndex,
// which counts raw records, a line here ends at a full (F) record, so the partial (P)
// records of a long line do not count as lines of their own.
import type { FileHandle } from 'node:fs/promises';
import { isFullRecord } from './cri-log.ts';

const NL = 0x0a;
// Enough of a record's start to read its tag: an RFC3339Nano timestamp, the stream, the tag.
const HEAD = 128;

/**
 * The offset of the first of the last `n` lines in the first `size` bytes of the file.
 * An unterminated last record is still being written and is not counted.
 */
export async function tailStart(file: FileHandle, size: number, n: number, chunkSize = 64 * 1024): Promise<number> {
  let fullLines = 0;
  let lineEnd = -1; // offset of the newline ending the record being delimited; -1 until one is found
  let after = Buffer.alloc(0); // the first bytes following the chunk, for records straddling chunks
  for (let right = size; right > 0; ) {
    const left = Math.max(0, right - chunkSize);
    const chunk = Buffer.alloc(right - left);
    const { bytesRead } = await file.read(chunk, 0, chunk.length, left);
    if (bytesRead < chunk.length) return 0; // truncated under us: start from the beginning
    const buf = Buffer.concat([chunk, after]);
    // Each newline at i delimits the record that starts at i + 1; offset 0 starts the first.
    for (let i = chunk.lastIndexOf(NL); ; i = i > 0 ? chunk.lastIndexOf(NL, i - 1) : -1) {
      if (i < 0 && left > 0) break;
      if (lineEnd >= 0 && isFullRecord(buf.subarray(i + 1, i + 1 + HEAD)) && ++fullLines > n) return lineEnd + 1;
      if (i < 0) return 0;
      lineEnd = left + i;
    }
    after = Buffer.from(buf.subarray(0, HEAD));
    right = left;
  }
  return 0;
}
