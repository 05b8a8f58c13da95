// The query of /stats/summary. Upstream reads only_cpu_and_memory=true and ignores any
// other value; here a value that is not a boolean is a 400 naming it, so a typo does
// not silently cost the caller the full (much larger) summary.

const TRUE = ['true', '1', 't', 'T', 'TRUE', 'True'];
const FALSE = ['false', '0', 'f', 'F', 'FALSE', 'False'];

/** Pure: whether only CPU and memory were asked for, or why the query is malformed. */
export function onlyCpuAndMemory(query: Record<string, unknown>): boolean | { status: 400; message: string } {
  const v = query.only_cpu_and_memory;
  if (v === undefined) return false;
  if (typeof v !== 'string') return { status: 400, message: 'query parameter only_cpu_and_memory given more than once\n' };
  if (TRUE.includes(v)) return true;
  if (FALSE.includes(v)) return false;
  return { status: 400, message: `invalid value ${JSON.stringify(v)} for query parameter only_cpu_and_memory: must be true or false\n` };
}
