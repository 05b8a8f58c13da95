#!/usr/bin/env bash
# Runs upstream's static CPU manager policy (the pinned release, from the Go module proxy) over
# src/cpumanager's static-policy cases and checks each case's `want` against its answers.
#   hack/cpumanager-check.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tool="$root/hack/tools/cpumanager-check"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
node "$tool/cases.ts" > "$tmp/cases.json"
(cd "$tool" && GOTOOLCHAIN=local go run . < "$tmp/cases.json" > "$tmp/answers.json" 2> "$tmp/upstream.log") || { cat "$tmp/upstream.log" >&2; exit 1; }
node "$tool/cases.ts" "$tmp/answers.json"
