#!/usr/bin/env bash
# Runs upstream's own topology manager hint merge (Policy.Merge) (the pinned release, from the Go
# module cache) over src/topologymanager's merge cases and checks each case's `want` against its answers.
#   hack/topologymanager-check.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tool="$root/hack/tools/numa-check"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
node "$tool/cases.ts" merge > "$tmp/cases.json"
(cd "$tool" && GOTOOLCHAIN=local nice -n 10 go run . merge < "$tmp/cases.json" > "$tmp/answers.json" 2> "$tmp/upstream.log") || { cat "$tmp/upstream.log" >&2; exit 1; }
node "$tool/cases.ts" merge "$tmp/answers.json"
