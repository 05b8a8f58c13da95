#!/usr/bin/env bash
# supervise.sh CMD...: keeps CMD running the way systemd's Restart=always would: restarts it
# when it exits, after a backoff that grows (1 s .. 10 s) while it keeps dying fast and
# resets once it has run 30 s. TERM/INT stop the child (KILL after 10 s) and then exit.
# hack/kubelet.sh starts it with start_bg; the child's pid is in $KTS_SUPERVISE_CHILD_PID_FILE if set.
set -uo pipefail
child=""
stopping=0
# alive PID: true while PID exists and is not a zombie (kill -0 succeeds on zombies).
alive() { local st; st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null) && [ "${st%% *}" != Z ]; }
stop() {
  stopping=1
  [ -n "$child" ] || exit 0
  kill -TERM "$child" 2>/dev/null
  for _ in $(seq 100); do alive "$child" || break; sleep 0.1; done
  kill -KILL "$child" 2>/dev/null
  wait "$child" 2>/dev/null
  echo "[supervise $(date +%H:%M:%S)] stopped" >&2
  exit 0
}
trap stop TERM INT
backoff=1
while :; do
  started=$SECONDS
  "$@" &
  child=$!
  [ -z "${KTS_SUPERVISE_CHILD_PID_FILE:-}" ] || echo "$child" > "$KTS_SUPERVISE_CHILD_PID_FILE"
  echo "[supervise $(date +%H:%M:%S)] started pid $child: $*" >&2
  wait "$child"; rc=$?
  # wait returns early (>128) when a trapped signal arrives; the trap then exits.
  [ $stopping = 1 ] && stop
  if [ $((SECONDS - started)) -ge 30 ]; then backoff=1; fi
  echo "[supervise $(date +%H:%M:%S)] pid $child exited with $rc; restarting in ${backoff}s" >&2
  sleep "$backoff" & wait $!
  backoff=$((backoff * 2)); [ $backoff -le 10 ] || backoff=10
done
