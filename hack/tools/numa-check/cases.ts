// The cases numa-check reads, and the comparison of its answers with each case's `want`:
//   node cases.ts merge|memory|checkpoint|hints|alloc            writes the cases as JSON
//   node cases.ts merge|memory|checkpoint|hints|alloc ANSWERS    compares upstream's answers with `want`; exits 1 on a difference
// checkpoint: upstream reads the text ours writes and writes it again; `want` is the case's text and spew.
// hints, alloc: the device manager's (hack/devicemanager-check.sh); compared with their keys sorted (Go's maps).
import { readFileSync } from 'node:fs';
import { marshalCheckpoint } from '../../../src/memorymanager/checkpoint.ts';
import { CHECKPOINT_CASES } from '../../../src/memorymanager/testdata/checkpoint-cases.ts';
import { MEMORY_CASES } from '../../../src/memorymanager/testdata/static-policy-cases.ts';
import { MERGE_CASES } from '../../../src/topologymanager/testdata/merge-cases.ts';
import { ALLOC_CASES, HINT_CASES } from '../../../src/devices/testdata/topology-cases.ts';

const [mode, answers] = process.argv.slice(2);
const checkpoints = CHECKPOINT_CASES.map(([name, data, text, spew]) => ({ name, data, want: spew ? { spew, text } : { text } }));
const cases: { name: string; want: unknown }[] =
  mode === 'merge'
    ? MERGE_CASES
    : mode === 'memory'
      ? MEMORY_CASES
      : mode === 'checkpoint'
        ? checkpoints
        : mode === 'hints'
          ? HINT_CASES
          : mode === 'alloc'
            ? ALLOC_CASES
            : [];
if (!cases.length) throw new Error(`usage: cases.ts merge|memory|checkpoint|hints|alloc [ANSWERS]`);
/** JSON with every object's keys sorted: Go writes its maps so. */
const sortedJSON = (v: unknown): string =>
  JSON.stringify(v, (_k, x) =>
    x && typeof x === 'object' && !Array.isArray(x)
      ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : x,
  );
const same = (a: unknown, b: unknown) =>
  mode === 'hints' || mode === 'alloc' ? sortedJSON(a) === sortedJSON(b) : JSON.stringify(a) === JSON.stringify(b);
if (!answers) {
  process.stdout.write(JSON.stringify(mode === 'checkpoint' ? checkpoints.map((c) => JSON.parse(marshalCheckpoint(c.data))) : cases));
} else {
  let got = JSON.parse(readFileSync(answers, 'utf8')) as unknown[];
  // The spew is compared where the case names it.
  if (mode === 'checkpoint')
    got = (got as { text: string; spew: string }[]).map((a, i) =>
      (checkpoints[i]!.want as { spew?: string }).spew ? { spew: a.spew, text: a.text } : { text: a.text },
    );
  let bad = 0;
  for (const [i, c] of cases.entries()) {
    const upstream = JSON.stringify(got[i]);
    if (!same(got[i], c.want)) {
      bad++;
      console.log(`${c.name}\n  upstream: ${upstream}\n  want:     ${JSON.stringify(c.want)}`);
    }
  }
  console.log(`${cases.length - bad} of ${cases.length} ${mode} cases as upstream answers them`);
  process.exit(bad ? 1 : 0);
}
