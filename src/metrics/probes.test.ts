import { test } from 'node:test';
import assert from 'node:assert/strict';
import { forgetProbe, observeProbe, probeRegistry, type ProbeTarget } from './probes.ts';

const t: ProbeTarget = { probeType: 'Liveness', container: 'app', pod: 'web', namespace: 'ns', podUID: 'u1' };
const sel = 'probe_type="Liveness",container="app",pod="web",namespace="ns"';

test('observeProbe counts results by label and times all but failures, as upstream', async () => {
  observeProbe(t, 'successful', 0.02);
  observeProbe(t, 'successful', 0.03);
  observeProbe(t, 'failed', 1);
  observeProbe(t, 'unknown', 0.5);
  const text = await probeRegistry.metrics();
  assert.match(
    text,
    /^# HELP prober_probe_total \[BETA\] Cumulative number of a liveness, readiness or startup probe for a container by result\.$/m,
  );
  assert.match(
    text,
    /^prober_probe_total\{probe_type="Liveness",result="successful",container="app",pod="web",namespace="ns",pod_uid="u1"\} 2$/m,
  );
  assert.match(text, /result="failed".* 1$/m);
  assert.match(text, /result="unknown".* 1$/m);
  assert.match(text, new RegExp(`^prober_probe_duration_seconds_count\\{${sel}\\} 3$`, 'm'));
  assert.match(text, new RegExp(`^prober_probe_duration_seconds_bucket\\{le="0.025",${sel}\\} 1$`, 'm'));
  assert.match(text, /^process_start_time_seconds \d{10}$/m);
});

test("forgetProbe removes the container's series", async () => {
  observeProbe(t, 'successful', 0.01);
  forgetProbe(t);
  const text = await probeRegistry.metrics();
  assert.doesNotMatch(text, /pod="web"/);
  assert.match(text, /^# TYPE prober_probe_total counter$/m, 'the family stays');
});
