#!/usr/bin/env bash
# upstream-diff.sh cri POD.yaml | status NAME | metrics [PATH]: kubelet-ts and the upstream kubelet
# side by side on the running local stack (`make up`, then `hack/upstream-kubelet.sh start`).
#   cri POD.yaml   the pod (NODE in it replaced by each node's name, hack/upstream-diff/*.yaml)
#                  on both nodes, then its CRI sandbox and container configs (crictl inspectp and
#                  inspect .info.config), diffed with names, UIDs and paths made alike;
#   status NAME    the status of the pods NAME-<node> and NAME-<node>-upstream, and their events;
#   metrics [PATH] the metric names each kubelet serves on PATH (default /metrics) that the other
#                  does not (_bucket/_sum/_count folded).
# What it prints is what differs; read it against upstream's code, some of it is each node's own
# (the env order, upstream's Go map order; each containerd's image store).
source "$(dirname "$0")/lib.sh"
need_root
export KUBECONFIG="$LOCAL/admin.kubeconfig" PATH="$BIN:$PATH"
ts=$NODE_NAME up=$NODE_NAME-upstream
TSS=unix://$CTRD_STATE/containerd.sock UPS=unix:///run/containerd-upstream/containerd.sock
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
alike() { jq -S "$1 | walk(if type == \"string\" then gsub(\"$up|$ts\"; \"NODE\") | gsub(\"pods-upstream\"; \"pods\") | gsub(\"kubelet-upstream\"; \"kubelet\") | gsub(\"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\"; \"UID\") | gsub(\"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z\"; \"T\") | gsub(\"containerd://[0-9a-f]+\"; \"ID\") else . end)"; }
case ${1:-} in
  cri)
    [ -f "${2:-}" ] || die "usage: $0 cri POD.yaml"
    name=$(sed -n -E 's/.*name: ([a-z0-9-]+)-NODE.*/\1/p' "$2" | head -1)
    for n in $ts $up; do sed "s/NODE/$n/g" "$2" | kubectl apply -f - >/dev/null; done
    for n in $ts $up; do kubectl wait --for=condition=Ready "pod/$name-$n" --timeout=90s >/dev/null || kubectl get pod "$name-$n" -o wide; done
    for side in ts up; do
      n=$ts s=$TSS; [ $side = up ] && n=$up s=$UPS
      uid=$(kubectl get pod "$name-$n" -o jsonpath='{.metadata.uid}')
      sb=$(crictl --runtime-endpoint "$s" pods -q --label "io.kubernetes.pod.uid=$uid" | head -1)
      crictl --runtime-endpoint "$s" inspectp "$sb" | alike '.info.config' > "$out/$side-sandbox.json"
      for c in $(crictl --runtime-endpoint "$s" ps -a -q --pod "$sb"); do
        j=$(crictl --runtime-endpoint "$s" inspect "$c")
        echo "$j" | alike '.info.config' > "$out/$side-$(echo "$j" | jq -r .status.metadata.name).json"
      done
    done
    for f in "$out"/ts-*.json; do k=${f#"$out"/ts-}; echo "=== $k"; diff "$f" "$out/up-$k"; done ;;
  status)
    [ -n "${2:-}" ] || die "usage: $0 status NAME"
    for n in $ts $up; do kubectl get pod "$2-$n" -o json | alike '.status' > "$out/$n.json"; done
    diff "$out/$ts.json" "$out/$up.json"
    for n in $ts $up; do
      echo "=== events of $2-$n"
      kubectl get events --field-selector "involvedObject.name=$2-$n" --sort-by=.firstTimestamp \
        -o custom-columns=T:.type,R:.reason,C:.count,F:.involvedObject.fieldPath,M:.message --no-headers
    done ;;
  metrics)
    for n in $ts $up; do
      kubectl get --raw "/api/v1/nodes/$n/proxy${2:-/metrics}" | grep -v '^#' | sed -E 's/[{ ].*//; s/_(bucket|sum|count)$//' | sort -u > "$out/$n"
    done
    echo "=== only upstream's"; comm -13 "$out/$ts" "$out/$up"
    echo "=== only kubelet-ts's"; comm -23 "$out/$ts" "$out/$up" ;;
  *) die "usage: $0 cri POD.yaml | status NAME | metrics [PATH]" ;;
esac
