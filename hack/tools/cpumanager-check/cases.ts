// The static policy's cases (src/cpumanager/testdata/static-policy-cases.ts) as cpumanager-check
// reads them: `node cases.ts` writes them as JSON; `node cases.ts ANSWERS.json` compares
// upstream's answers with each case's `want` and exits 1 on a difference.
import { readFileSync } from 'node:fs';
import { CASES } from '../../../src/cpumanager/testdata/static-policy-cases.ts';
import { factsOf } from '../../../src/cpumanager/testing.ts';

const answers = process.argv[2];
if (!answers) {
  const out = CASES.map((c) => {
    const { cpus, numaNodes } = factsOf(c.shape);
    return {
      name: c.name,
      cpus,
      numa: numaNodes.map((n) => ({ id: n.id, cpus: n.cpus.toString() })),
      numReserved: c.numReserved,
      reserved: c.reserved ?? '',
      options: c.options ?? {},
      default: c.default ?? '',
      steps: c.steps,
    };
  });
  process.stdout.write(JSON.stringify(out));
} else {
  const got = JSON.parse(readFileSync(answers, 'utf8')) as { name: string; steps: unknown[] | null }[];
  let bad = 0;
  for (const [i, c] of CASES.entries()) {
    const upstream = JSON.stringify(got[i]?.steps ?? []);
    if (upstream !== JSON.stringify(c.want)) {
      bad++;
      console.log(`${c.name}\n  upstream: ${upstream}\n  want:     ${JSON.stringify(c.want)}`);
    }
  }
  console.log(`${CASES.length - bad} of ${CASES.length} cases as upstream answers them`);
  process.exit(bad ? 1 : 0);
}
