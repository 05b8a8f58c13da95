#!/usr/bin/env bash
# Runs upstream's own static memory manager policy (the pinned release, from the Go
# module cache) over src/memorymanager's memory cases and checks each case's `want` against its answers.
#   hack/memorymanager-check.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tool="$root/hack/tools/numa-check"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
node "$tool/cases.ts" memory > "$tmp/cases.json"
(cd "$tool" && GOTOOLCHAIN=local nice -n 10 go run . memory < "$tmp/cases.json" > "$tmp/answers.json" 2> "$tmp/upstream.log") || { cat "$tmp/upstream.log" >&2; exit 1; }
node "$tool/cases.ts" memory "$tmp/answers.json"
