// hack/tools/monitoring-rules.sh's filter: `helm template` output (YAML documents) on stdin, the
// kubelet and container rule groups (select-groups.ts) as a Prometheus rule file on stdout.
import { readFileSync } from 'node:fs';
import { parseAllDocuments, stringify } from 'yaml';
import { selectGroups } from './select-groups.ts';

const docs = parseAllDocuments(readFileSync(0, 'utf8')).map((d) => d.toJS());
try {
  process.stdout.write(stringify(selectGroups(docs), { lineWidth: 0 }));
} catch (e) {
  process.stderr.write(`${(e as Error).message}\n`);
  process.exit(1);
}
