#!/usr/bin/env bash
# Runs the upstream conformance tests that exercise the kubelet against the running local
# stack (`make up`): e2e.test of the pinned release, --provider=skeleton, in parallel with
# the ginkgo CLI. Writes the JUnit report under _output/conformance and, for the default
# selection, docs/conformance.md.
#   FOCUS=regex  run other tests (default: sig-node conformance and the kubelet-facing
#                sig-storage ones); SKIP=regex replaces the default skip list.
#   PROCS=n      parallel test processes (default 4); CONFORMANCE_OUT=dir for the reports.
source "$(dirname "$0")/lib.sh"
need_root

DEFAULT_FOCUS='\[sig-node\].*\[Conformance\]|\[sig-storage\] (ConfigMap|Secrets|Downward API|Projected|EmptyDir|HostPath|Subpath).*\[Conformance\]'
EXCLUDED="$KTS_ROOT/test/conformance/excluded.txt"
# Excluded tests: one regex per line, then "  # " and why (docs/conformance.md lists them).
excluded_re=$(sed -e 's/  # .*//' -e '/^#/d' -e '/^$/d' "$EXCLUDED" | paste -sd'|')
FOCUS="${FOCUS:-$DEFAULT_FOCUS}"
SKIP="${SKIP:-\[Serial\]|\[Disruptive\]|\[Flaky\]|$excluded_re}"
PROCS="${PROCS:-4}"
OUTDIR="${CONFORMANCE_OUT:-$OUT/conformance}"
KUBECONFIG_ADMIN="$LOCAL/admin.kubeconfig"

[ -f "$KUBECONFIG_ADMIN" ] || die "no local cluster: run 'make up' first"
bash "$KTS_ROOT/hack/build-conformance.sh"
bash "$KTS_ROOT/hack/build-images.sh" --conformance
kubectl --kubeconfig "$KUBECONFIG_ADMIN" get --raw /readyz >/dev/null || die "the apiserver on $KTS_IP is not ready: run 'make up'"

rm -rf "$OUTDIR"; mkdir -p "$OUTDIR"
# No registry is reachable: a pull of an image we did not build fails at once. Name it
# loudly while the run goes on (the test itself then times out waiting for its pod).
# (Its own process group, so that the whole pipeline stops with the run.)
export -f log; export KUBECONFIG_ADMIN OUTDIR
setsid bash -c 'kubectl --kubeconfig "$KUBECONFIG_ADMIN" get events -A --watch-only --field-selector reason=Failed \
    -o jsonpath="{.message}{\"\n\"}" 2>/dev/null | grep --line-buffered -i pull \
  | while read -r line; do log "MISSING IMAGE: $line"; echo "$line" >> "$OUTDIR/missing-images.txt"; done' &
watcher=$!
trap 'kill -TERM -- -$watcher 2>/dev/null || true' EXIT

log "running conformance tests ($PROCS in parallel; focus: $FOCUS)"
start=$SECONDS
set +e
ginkgo --procs="$PROCS" --timeout=3h --no-color --silence-skips --output-dir="$OUTDIR" --junit-report=junit.xml \
  --focus="$FOCUS" --skip="$SKIP" "$BIN/e2e.test" -- \
  --provider=skeleton --kubeconfig="$KUBECONFIG_ADMIN" --kubectl-path="$BIN/kubectl" \
  --dump-logs-on-failure=false --report-dir="$OUTDIR" 2>&1 | tee "$OUTDIR/e2e.log"
rc=${PIPESTATUS[0]}
set -e
wall=$((SECONDS - start))
log "conformance run finished in $((wall / 60))m$((wall % 60))s (exit $rc)"

report="$OUTDIR/conformance.md"
[ "$FOCUS" = "$DEFAULT_FOCUS" ] && [ "$SKIP" = "\[Serial\]|\[Disruptive\]|\[Flaky\]|$excluded_re" ] && report="$KTS_ROOT/docs/conformance.md"
node "$KTS_ROOT/test/conformance/report.ts" --junit "$OUTDIR/junit.xml" --excluded "$EXCLUDED" \
  --known "$KTS_ROOT/test/conformance/known-failures.txt" --wall "$wall" --procs "$PROCS" --release "$KUBE_VERSION" \
  --missing "$OUTDIR/missing-images.txt" --notes "$KTS_ROOT/test/conformance/notes.md" > "$report"
log "report: $report"
exit "$rc"
