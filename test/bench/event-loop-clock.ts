// What prom-client's event-loop-delay sampling costs an idle process (docs/benchmarks.md, "The
// event loop's 10 ms clock"): collectDefaultMetrics at the precision given (ms; 0: prom-client's
// default, -1: no default metrics), then nothing for SECONDS; prints the CPU used. Run several
// side by side under the kubelet's V8 flags, e.g.
//   for p in -1 0 100 1000; do node --max-semi-space-size=2 --no-maglev --no-opt \
//     --heap-growing-percent=50 test/bench/event-loop-clock.ts $p & done; wait
import { collectDefaultMetrics, Registry } from 'prom-client';

const precision = Number(process.argv[2] ?? 0);
const seconds = Number(process.env.SECONDS_IDLE ?? 60);
if (precision >= 0)
  collectDefaultMetrics({ register: new Registry(), ...(precision > 0 ? { eventLoopMonitoringPrecision: precision } : {}) });
const start = process.cpuUsage();
setTimeout(() => {
  const used = process.cpuUsage(start);
  const label = precision < 0 ? 'no default metrics' : precision === 0 ? "prom-client's default" : `${precision} ms`;
  console.log(`${label}: ${((used.user + used.system) / 1000).toFixed(1)} ms of CPU in ${seconds} s`);
}, seconds * 1000);
