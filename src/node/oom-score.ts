// The kubelet's own oom_score_adj (KubeletConfiguration oomScoreAdj, -999 by default), as
// upstream's run() sets it before RunKubelet (pkg/util/oom ApplyOOMScoreAdj on "self"): under
// memory pressure the kernel's OOM killer takes the pods' processes before the kubelet that
// runs them. Lowering it takes CAP_SYS_RESOURCE; without it the kubelet says so and runs on,
// as upstream does.
import { writeFileSync } from 'node:fs';

/** Writes value to the process's oom_score_adj; the error when it cannot. */
export function applyOwnOOMScoreAdj(value: number, write = (v: string) => writeFileSync('/proc/self/oom_score_adj', v)): Error | undefined {
  try {
    write(String(value));
    return undefined;
  } catch (e) {
    return e as Error;
  }
}
