#!/usr/bin/env bash
# e2e-files.sh FILE...: the e2e files one after the other (they share the stack), as
# `node --test --test-concurrency=1` would run them, each followed by a line with its time, and
# at the end where the minutes went, longest first: what CI time work starts from. Every file
# runs even after one fails; the exit status is the first failure's. E2E_SKIP=regex leaves out the
# tests whose names it matches (node --test-skip-pattern).
# Each failing test's name and the first line of its error are printed once more at the end, and
# appended to $E2E_FAILURES when set (make test prints that file last): a CI report keeps only
# the last lines of the output, and a failure's reason was lost in the middle.
set -uo pipefail
rc=0 rows=() out=$(mktemp) failed=$(mktemp)
trap 'rm -f "$out" "$failed"' EXIT
for f in "$@"; do
  start=$SECONDS
  node --test --test-reporter=spec ${E2E_SKIP:+--test-skip-pattern="$E2E_SKIP"} "$f" | tee "$out"
  r=${PIPESTATUS[0]}
  s=$((SECONDS - start))
  [ "$r" = 0 ] || [ "$rc" != 0 ] || rc=$r
  printf '[%(%H:%M:%S)T] e2e %s: %dm%02ds%s\n' -1 "$f" $((s / 60)) $((s % 60)) "$([ "$r" = 0 ] || echo " (exit $r)")"
  rows+=("$(printf '%5d %s' "$s" "$f")")
  # The spec reporter's "failing tests:" section: each "✖ name (time)", then its error's first line.
  [ "$r" = 0 ] || awk -v f="$f" '/failing tests:/ { on = 1; next }
    on && /^✖ / { name = substr($0, 5); sub(/ \([0-9.]+m?s\)$/, "", name); want = 1; next }
    on && want && NF { sub(/^ +/, ""); printf "%s: %s: %s\n", f, name, substr($0, 1, 400); want = 0 }' "$out" >> "$failed"
done
echo "e2e files, longest first (seconds):"
printf '%s\n' "${rows[@]}" | sort -rn
if [ -s "$failed" ]; then
  echo "failing e2e tests:"
  cat "$failed"
  [ -z "${E2E_FAILURES:-}" ] || cat "$failed" >> "$E2E_FAILURES"
fi
exit "$rc"
