// The cases numa-check reads, and the comparison of its answers with each case's `want`:
//   node cases.ts merge|memory            writes the cases as JSON
//   node cases.ts merge|memory ANSWERS    compares upstream's answers with `want`; exits 1 on a difference
import { readFileSync } from 'node:fs';
import { MEMORY_CASES } from '../../../src/memorymanager/testdata/static-policy-cases.ts';
import { MERGE_CASES } from '../../../src/topologymanager/testdata/merge-cases.ts';

const [mode, answers] = process.argv.slice(2);
const cases: { name: string; want: unknown }[] = mode === 'merge' ? MERGE_CASES : mode === 'memory' ? MEMORY_CASES : [];
if (!cases.length) throw new Error(`usage: cases.ts merge|memory [ANSWERS]`);
if (!answers) {
  process.stdout.write(JSON.stringify(cases));
} else {
  const got = JSON.parse(readFileSync(answers, 'utf8')) as unknown[];
  let bad = 0;
  for (const [i, c] of cases.entries()) {
    const upstream = JSON.stringify(got[i]);
    if (upstream !== JSON.stringify(c.want)) {
      bad++;
      console.log(`${c.name}\n  upstream: ${upstream}\n  want:     ${JSON.stringify(c.want)}`);
    }
  }
  console.log(`${cases.length - bad} of ${cases.length} ${mode} cases as upstream answers them`);
  process.exit(bad ? 1 : 0);
}
