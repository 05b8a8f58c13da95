#!/usr/bin/env bash
# Runs upstream conformance tests of the pinned release (e2e.test, --provider=skeleton, with
# the ginkgo CLI) against the local cluster of kubelet-ts nodes (`make up`), as a certified
# conformance run does: the parallel specs in PROCS processes, then the [Serial] ones alone
# (ginkgo runs specs decorated Serial after the others, on one process).
#   SUITE=full   every test of the release's conformance list (default; docs/conformance.md)
#   SUITE=node   the [Conformance] tests of sig-node and the kubelet-facing sig-storage ones,
#                without [Serial] (docs/conformance-node.md)
#   SUITE=sig-node  the other sig-node tests, but alpha features (docs/conformance-sig-node.md)
#   SUITE=storage the [Driver: csi-hostpath] and CSI Mock specs (docs/conformance-storage.md)
#   FOCUS=regex, SKIP=regex  another selection (its report stays under CONFORMANCE_OUT)
#   PROCS=n      parallel test processes (default 6); CONFORMANCE_OUT=dir for the reports
#                (default _output/conformance-SUITE);
#   TIMEOUT=d    the whole run's limit (ginkgo duration, default 4h: what ran is reported).
#   BUILD_ONLY=1 builds e2e.test, ginkgo and the tests' binaries, then stops (the e2e smoke's
#                setup: 15 minutes on a cold machine, not to be counted in its time limit).
#   CLUSTER=kind against the kind cluster KIND_CLUSTER (`make kind`, docs/kind.md) instead; its
#                nodes pull the tests' images through the local stack's registry, their mirror
#                (docs/conformance-kind.md for SUITE=full).
source "$(dirname "$0")/cluster/lib.sh"
source "$KTS_ROOT/hack/kind/lib.sh"
need_root

EXCLUDED="$KTS_ROOT/test/conformance/excluded.txt"
# Excluded tests: one regex per line, then "  # " and why (docs/conformance.md lists them).
excluded_re=$(sed -e 's/  # .*//' -e '/^#/d' -e '/^$/d' "$EXCLUDED" | paste -sd'|')
# or_excluded RE: RE, or an excluded test (with no exclusion, an empty alternative would match all).
or_excluded() { echo "$1${excluded_re:+|$excluded_re}"; }
SUITE="${SUITE:-full}"
case "$SUITE" in
  full)
    focus='\[Conformance\]'; skip="$excluded_re"; report="$KTS_ROOT/docs/conformance.md" ;;
  node)
    focus='\[sig-node\].*\[Conformance\]|\[sig-storage\] (ConfigMap|Secrets|Downward API|Projected|EmptyDir|HostPath|Subpath).*\[Conformance\]'
    skip=$(or_excluded '\[Serial\]|\[Disruptive\]|\[Flaky\]'); report="$KTS_ROOT/docs/conformance-node.md" ;;
  sig-node)
    # The other sig-node tests: not [Conformance], [Serial], [Disruptive] or [Flaky], and not
    # behind an alpha or off-by-default feature gate.
    focus='\[sig-node\]'
    skip=$(or_excluded '\[Conformance\]|\[Serial\]|\[Disruptive\]|\[Flaky\]|\[Alpha\]|\[Feature:OffByDefault\]')
    report="$KTS_ROOT/docs/conformance-sig-node.md" ;;
  storage)
    # Upstream's storage suites on the CSI hostpath driver, and the CSI Mock specs (docs/csi.md).
    # ([Feature:SELinux] specs need nodes with SELinux, which these have not.)
    focus='\[Driver: csi-hostpath\]|CSI Mock'
    skip=$(or_excluded '\[Serial\]|\[Disruptive\]|\[Flaky\]|\[Alpha\]|\[Feature:OffByDefault\]|\[Feature:SELinux\]')
    report="$KTS_ROOT/docs/conformance-storage.md" ;;
  *) die "SUITE is full, node, sig-node or storage, not '$SUITE'" ;;
esac
KUBECONFIG_ADMIN="$CLUSTER_KUBECONFIG"
case "${CLUSTER:-local}" in
  local) ;;
  # (The kind cluster's reports are its own: the whole suite's and storage's in docs, the others in _output.)
  kind) KUBECONFIG_ADMIN="$KIND_KUBECONFIG"; report=""
    case "$SUITE" in full) report="$KTS_ROOT/docs/conformance-kind.md" ;; storage) report="$KTS_ROOT/docs/conformance-storage-kind.md" ;; esac
    SUITE_OUT=kind-$SUITE ;;
  *) die "CLUSTER is local or kind, not '$CLUSTER'" ;;
esac
[ -z "${FOCUS:-}${SKIP:-}" ] || report=""
FOCUS="${FOCUS:-$focus}"
SKIP="${SKIP:-$skip}"
# (An empty --skip would be a pattern that matches every test.)
skip_args=(); [ -z "$SKIP" ] || skip_args=(--skip="$SKIP")
PROCS="${PROCS:-6}"
OUTDIR="${CONFORMANCE_OUT:-$OUT/conformance-${SUITE_OUT:-$SUITE}}"

# Not e2e_node.test: only hack/node-conformance.sh runs it (a few minutes more on a cold machine).
bash "$KTS_ROOT/hack/build-conformance.sh" e2e.test ginkgo agnhost nnp sample-apiserver sample-device-plugin dra-test-driver
[ -z "${BUILD_ONLY:-}" ] || exit 0
[ -f "$KUBECONFIG_ADMIN" ] || die "no cluster ($KUBECONFIG_ADMIN): run 'make ${CLUSTER/local/up}' first"
ckubectl() { "$BIN/kubectl" --kubeconfig "$KUBECONFIG_ADMIN" "$@"; }
ckubectl get --raw /readyz >/dev/null || die "the cluster's apiserver ($KUBECONFIG_ADMIN) is not ready"
nodes=$(ckubectl get nodes -o jsonpath='{.items[*].metadata.name}')
# (One conformance test demands two untainted, schedulable nodes: a control plane and two workers.
# Their taints are not checked: the systemd node's smoke cordons the other workers on purpose.)
[ "$(wc -w <<<"$nodes")" -ge 3 ] || die "the conformance tests need two untainted nodes: a cluster of 3 nodes or more (make up, make kind)"
# The tests' images: no registry outside is reachable.
if [ "${CLUSTER:-local}" = kind ]; then
  # Into the local stack's containerd, which pushes them to its registry: the kind nodes' mirror
  # of registry.k8s.io and docker.io (kind's local registry setup), where they pull them from.
  bash "$KTS_ROOT/hack/build-images.sh" --conformance >>"$LOGS/build-images-kind.log" 2>&1 \
    || die "the conformance images could not be built or pushed (see $LOGS/build-images-kind.log)"
else
  # Into every node's containerd. The first node's call builds them (cached in $KTS_CACHE) and
  # imports them; the other nodes only import, side by side.
  set -- $nodes
  bash "$KTS_ROOT/hack/cluster/node.sh" images "$1" --conformance
  pids=(); for n in "${@:2}"; do bash "$KTS_ROOT/hack/cluster/node.sh" images "$n" --conformance & pids+=($!); done
  for p in "${pids[@]}"; do wait "$p" || die "the conformance images could not be imported (see the lines above)"; done
fi

# The storage suites' snapshot specs need the VolumeSnapshot CRDs and the snapshot-controller,
# which a cluster has installed once (upstream's CI jobs install them): csi-hostpath.sh applies
# them with the driver itself (the specs deploy drivers of their own).
if [ "$SUITE" = storage ]; then
  bash "$KTS_ROOT/hack/cluster/csi-hostpath.sh" apply || die "the VolumeSnapshot CRDs and snapshot-controller could not be applied"
fi

rm -rf "$OUTDIR"; mkdir -p "$OUTDIR"
watcher=$(watch_failed_pulls "$KUBECONFIG_ADMIN" "$OUTDIR/missing-images.txt")
trap 'kill -TERM -- -$watcher 2>/dev/null || true' EXIT

log "running conformance tests ($SUITE, $PROCS in parallel; focus: $FOCUS; skip: $SKIP)"
start=$SECONDS
# The commit of the kubelet-ts under test: the checkout as the run begins (it may move during it).
commit=$(git -C "$KTS_ROOT" rev-parse --short HEAD)
set +e
ginkgo --procs="$PROCS" --timeout="${TIMEOUT:-4h}" --no-color --silence-skips --output-dir="$OUTDIR" --junit-report=junit.xml \
  --focus="$FOCUS" "${skip_args[@]}" "$BIN/e2e.test" -- \
  --provider=skeleton --kubeconfig="$KUBECONFIG_ADMIN" --kubectl-path="$BIN/kubectl" \
  --dump-logs-on-failure=false --report-dir="$OUTDIR" 2>&1 | tee "$OUTDIR/e2e.log"
rc=${PIPESTATUS[0]}
set -e
wall=$((SECONDS - start))
log "conformance run finished in $((wall / 60))m$((wall % 60))s (exit $rc)"

# The run's notes: the kind cluster's own when it has them (notes-kind-SUITE.md).
notes="$KTS_ROOT/test/conformance/notes-${SUITE_OUT:-$SUITE}.md"; [ -f "$notes" ] || notes="$KTS_ROOT/test/conformance/notes-$SUITE.md"
list=$(cd "$KTS_ROOT/hack/tools/conformance" && GOFLAGS=-mod=mod go list -m -f '{{.Dir}}' k8s.io/kubernetes)/test/conformance/testdata/conformance.yaml
args=(--junit "$OUTDIR/junit.xml" --excluded "$EXCLUDED" --known "$KTS_ROOT/test/conformance/known-failures.txt"
  --wall "$wall" --procs "$PROCS" --release "$KUBE_VERSION" --suite "$SUITE" --nodes "$(wc -w <<<"$nodes")"
  --commit "$commit" --missing "$OUTDIR/missing-images.txt"
  --notes "$notes")
[ "$SUITE" = full ] && args+=(--list "$list")
if [ "${CLUSTER:-local}" = kind ]; then
  # Which nodes run kubelet-ts: the node image's /usr/bin/kubelet (hack/kind/node-image.sh).
  kts=0; for n in $nodes; do [[ $(kind_podman exec "$n" readlink -f /usr/bin/kubelet 2>/dev/null) == */kubelet-ts ]] && kts=$((kts + 1)); done
  args+=(--kind-kubelet-ts "$kts")
fi
node "$KTS_ROOT/test/conformance/report.ts" "${args[@]}" > "$OUTDIR/conformance.md"
if [ -n "$report" ]; then
  cp "$OUTDIR/conformance.md" "$report"
  # The upstream JUnit report beside it, to check a result test by test (passed specs' output
  # dropped: it is most of the file and says nothing a pass does not).
  node "$KTS_ROOT/test/conformance/report.ts" --trim-junit "$OUTDIR/junit.xml" > "${report%.md}-junit.xml"
fi
log "report: ${report:-$OUTDIR/conformance.md}"
exit "$rc"
