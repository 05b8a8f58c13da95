#!/usr/bin/env bash
# Runs upstream's own device manager (the pinned release's pkg/kubelet/cm/devicemanager, from the
# Go module cache) over src/devices' topology cases (GetTopologyHints / GetPodTopologyHints and
# devicesToAllocate with an affinity and GetPreferredAllocation) and checks each case's `want`
# against its answers. Those functions are unexported: the package's sources are copied, for the
# run only, into a package of the tool module beside a helper that builds a ManagerImpl holding
# a case's state (hack/tools/numa-check/devicecheck/helpers.go.in), as upstream's own tests do.
#   hack/devicemanager-check.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tool="$root/hack/tools/numa-check"
pkg="$tool/devicecheck/upstream"
tmp=$(mktemp -d); trap 'rm -rf "$tmp" "$pkg"' EXIT
src="$(cd "$tool" && GOTOOLCHAIN=local go env GOMODCACHE)/k8s.io/kubernetes@v1.36.3/pkg/kubelet/cm/devicemanager"
[ -d "$src" ] || (cd "$tool" && GOTOOLCHAIN=local go mod download k8s.io/kubernetes)
rm -rf "$pkg"; mkdir -p "$pkg"
for f in "$src"/*.go; do case "$f" in *_test.go) ;; *) cp "$f" "$pkg/" ;; esac; done
chmod u+w "$pkg"/*.go
cp "$tool/devicecheck/helpers.go.in" "$pkg/zz_kts_helpers.go"
for mode in hints alloc; do
  node "$tool/cases.ts" "$mode" > "$tmp/cases.json"
  (cd "$tool" && GOTOOLCHAIN=local nice -n 10 go run ./devicecheck "$mode" < "$tmp/cases.json" > "$tmp/answers.json" 2> "$tmp/upstream.log") || { cat "$tmp/upstream.log" >&2; exit 1; }
  node "$tool/cases.ts" "$mode" "$tmp/answers.json"
done
