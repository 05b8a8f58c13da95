// Helpers for the tests of log readers (here and in src/server). Not named .test.ts, so the unit
// test glob does not run it as a test file; tsconfig.build.json leaves it out of dist.
import { readdirSync, readlinkSync } from 'node:fs';

/** Whether this process still has the file open: a follower that stopped must have let it go. */
export const isOpen = (path: string) =>
  readdirSync('/proc/self/fd').some((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === path;
    } catch {
      return false;
    }
  });
