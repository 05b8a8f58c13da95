#!/usr/bin/env bash
# Runs upstream's own static memory manager policy and memory_manager_state checkpoint (the pinned
# release, from the Go module cache) over src/memorymanager's cases and checks each case's `want`
# against its answers: the policy's decisions, and the checkpoint text ours writes read and
# written again by upstream, byte for byte with its checksum and the go-spew text it hashes.
#   hack/memorymanager-check.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tool="$root/hack/tools/numa-check"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
(cd "$tool" && GOTOOLCHAIN=local nice -n 10 go build -o "$tmp/numa-check" . 2> "$tmp/upstream.log") || { cat "$tmp/upstream.log" >&2; exit 1; }
status=0
for mode in memory checkpoint; do
  node "$tool/cases.ts" $mode > "$tmp/$mode.json"
  "$tmp/numa-check" $mode < "$tmp/$mode.json" > "$tmp/$mode-answers.json" 2> "$tmp/upstream.log" || { cat "$tmp/upstream.log" >&2; exit 1; }
  node "$tool/cases.ts" $mode "$tmp/$mode-answers.json" || status=1
done
exit $status
