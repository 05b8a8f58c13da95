#!/usr/bin/env bash
# e2e-files.sh FILE...: the e2e files one after the other (they share the stack), as
# `node --test --test-concurrency=1` would run them, each followed by a line with its time, and
# at the end where the minutes went, longest first: what CI time work starts from. Every file
# runs even after one fails; the exit status is the first failure's. E2E_SKIP=regex leaves out the
# tests whose names it matches (node --test-skip-pattern).
set -uo pipefail
rc=0 rows=()
for f in "$@"; do
  start=$SECONDS
  node --test --test-reporter=spec ${E2E_SKIP:+--test-skip-pattern="$E2E_SKIP"} "$f"
  r=$?
  s=$((SECONDS - start))
  [ "$r" = 0 ] || [ "$rc" != 0 ] || rc=$r
  printf '[%(%H:%M:%S)T] e2e %s: %dm%02ds%s\n' -1 "$f" $((s / 60)) $((s % 60)) "$([ "$r" = 0 ] || echo " (exit $r)")"
  rows+=("$(printf '%5d %s' "$s" "$f")")
done
echo "e2e files, longest first (seconds):"
printf '%s\n' "${rows[@]}" | sort -rn
exit "$rc"
