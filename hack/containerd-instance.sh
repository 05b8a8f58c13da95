# containerd-instance.sh (sourced after lib.sh): a containerd of the stack's build beside the
# stack's own, every path its own (config, root, state and socket, runc root, netns mounts, CNI
# conf and host-local data, its pods' cgroup root), with no registry: the images come from the
# stack's containerd. hack/upstream-kubelet.sh runs one for the upstream kubelet, and
# hack/runtime-floor.sh one with no kubelet at all. The caller sets, before sourcing:
#   CI_NAME     its process name for start_bg/stop_bg and its log (containerd-upstream)
#   CI_DIR      its config dir under $LOCAL      CI_ROOT, CI_STATE  containerd's root and state dirs
#   CI_CNI_DIR  its CNI conf dir ($LOCAL/cni-X/net.d)   CI_CNI_DATA  host-local's data
#   CI_NETWORK  the CNI network's name              CI_BRIDGE  its bridge
#   CI_CGROUP   its pods' cgroup root (a name under each hierarchy)
#   CI_IMAGES   the images it needs (an array)
CI_SOCK="$CI_STATE/containerd.sock"

ci_ctr() { "$CTR" --address "$CI_SOCK" -n k8s.io "$@"; }
ci_sock_ok() { [ -S "$CI_SOCK" ] && "$CTR" --address "$CI_SOCK" --connect-timeout 2s version >/dev/null 2>&1; }
main_sock_ok() { [ -S "$CONTAINERD_SOCK" ] && "$CTR" --address "$CONTAINERD_SOCK" --connect-timeout 2s version >/dev/null 2>&1; }
ci_cgroup_dirs() { local d; for d in /sys/fs/cgroup/*/; do [ -f "$d/cgroup.procs" ] && echo "${d%/}/$CI_CGROUP"; done; return 0; }

# ci_write_conflist SUBNET: a bridge for SUBNET, as src/network/cni-config.ts writes the
# kubelets' (containerd reloads the dir itself); written whole, then renamed.
ci_write_conflist() {
  mkdir -p "$CI_CNI_DIR"
  cat > "$CI_CNI_DIR/.10-$CI_NETWORK.conflist.tmp" <<JSON
{
  "cniVersion": "0.4.0",
  "name": "$CI_NETWORK",
  "plugins": [
    {
      "type": "bridge", "bridge": "$CI_BRIDGE", "isGateway": true, "ipMasq": true, "hairpinMode": true,
      "ipam": { "type": "host-local", "ranges": [[{ "subnet": "$1" }]], "routes": [{ "dst": "0.0.0.0/0" }], "dataDir": "$CI_CNI_DATA/networks" }
    },
    { "type": "portmap", "capabilities": { "portMappings": true } },
    { "type": "loopback" }
  ]
}
JSON
  mv "$CI_CNI_DIR/.10-$CI_NETWORK.conflist.tmp" "$CI_CNI_DIR/10-$CI_NETWORK.conflist"
}

# ci_copy_image IMAGE TAR: the image from the stack's containerd into this one's, through TAR.
# On failure, its last output line is the reason (ctr's own, with a hint when the export failed).
ci_copy_image() {
  local out
  out=$(ctr_k8s images export "$2" "$1" 2>&1) || { echo "${out##*$'\n'} (is it built? hack/build-images.sh)"; return 1; }
  ci_ctr images import "$2" 2>&1
}

# ci_start: the config (as the stack's, but every path its own), the daemon, its images.
ci_start() {
  main_sock_ok || die "the stack's containerd is not running on $CONTAINERD_SOCK: run make up"
  mkdir -p "$CI_DIR" "$CI_CNI_DIR" "$CI_CNI_DATA"
  runtime_toml by="$0" root="$CI_ROOT" state="$CI_STATE" sock="$CI_SOCK" \
    runc_root="$CI_STATE/runc" netns_under_state=true cni_bin=/usr/lib/cni cni_conf="$CI_CNI_DIR" \
    > "$CI_DIR/config.toml"
  log "starting $CI_NAME (log: $LOGS/$CI_NAME.log)"
  mkdir -p "$LOGS"; : > "$LOGS/$CI_NAME.log"   # one log per start, so a failure's last line is this run's
  start_bg "$CI_NAME" env PATH="$CTRD_PATH:$PATH" "$CTRD" --config "$CI_DIR/config.toml"
  wait_for 30 "$CI_NAME" ci_sock_ok
  local img tar err try
  tar=$(mktemp "$CI_DIR/image.XXXXXX.tar")
  for img in "${CI_IMAGES[@]}"; do
    ci_ctr images check "name==$img" 2>/dev/null | grep -q complete && continue
    # Export and import tried up to 5 times, 2 s apart: twice on 2026-11-27 the import failed,
    # once on a blob of the exported tar cut short ("short read"), and the next start went
    # through; on 2026-12-05, 40 s after the stack came up, two tries 1 s apart both failed so.
    for try in 1 2 3 4 5; do
      err=$(ci_copy_image "$img" "$tar") && break
      [ $try -lt 5 ] || { rm -f "$tar"; die "cannot copy $img from $CONTAINERD_SOCK into $CI_SOCK: ${err##*$'\n'}"; }
      log "copying $img into $CI_NAME failed (try $try of 5): ${err##*$'\n'}"
      sleep 2
    done
  done
  rm -f "$tar"
}

# ci_stop [DIR...]: its pods, the daemon, shims and runc state, the mounts under its dirs and
# the DIRs (deepest first), the network (bridge, the masquerade chains of pods whose CNI DEL
# never ran, IPAM data), its dirs and cgroups. Best effort and quiet when already gone. A dir
# with a mount left is kept: never recurse through a mount (a hostPath bind would be emptied).
ci_stop() {
  local crictl=(crictl --runtime-endpoint "unix://$CI_SOCK" --image-endpoint "unix://$CI_SOCK" --timeout 30s)
  if ci_sock_ok && [ -n "$("${crictl[@]}" pods -q 2>/dev/null)" ]; then
    log "removing the pod sandboxes left in $CI_NAME"
    "${crictl[@]}" rmp -af >/dev/null 2>&1 || log "crictl rmp -af on $CI_SOCK failed"
  fi
  stop_bg "$CI_NAME" 30
  local root id pid m dir rule chain
  for root in "$CI_STATE"/runc/*; do
    [ -d "$root" ] || continue
    for id in $("$RUNC" --root "$root" list -q 2>/dev/null); do "$RUNC" --root "$root" delete -f "$id" >/dev/null 2>&1; done
  done
  for pid in $(pgrep -f '^/[^ ]*/containerd-shim-runc-v2 ' || true); do
    tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "-address $CI_SOCK " && kill -KILL "$pid" 2>/dev/null
  done
  local dirs=("$CI_STATE" "$CI_ROOT" "$@")
  for m in $(awk '{print $2}' /proc/self/mounts | grep -E "^($(IFS='|'; echo "${dirs[*]}"))(/|$)" | sort -r); do
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || log "cannot unmount $m"
  done
  if ip link show "$CI_BRIDGE" >/dev/null 2>&1; then ip link del "$CI_BRIDGE"; fi
  while read -r rule; do
    chain=${rule##* -j }
    eval "iptables -t nat -D ${rule#-A }" 2>/dev/null
    iptables -t nat -F "$chain" 2>/dev/null; iptables -t nat -X "$chain" 2>/dev/null
  done < <(iptables -t nat -S POSTROUTING 2>/dev/null | grep -F "name: \\\"$CI_NETWORK\\\"" || true)
  rm -rf "$CI_CNI_DATA" "${CI_CNI_DIR%/net.d}" /var/lib/cni/results/"$CI_NETWORK"-* 2>/dev/null
  for dir in "${dirs[@]}"; do
    [ -d "$dir" ] || continue
    if awk '{print $2}' /proc/self/mounts | grep -qE "^$dir(/|$)"; then log "mounts remain under $dir: not removing it"; else rm -rf --one-file-system "$dir"; fi
  done
  rm -rf "$CI_DIR"
  for dir in $(ci_cgroup_dirs); do [ -d "$dir" ] && find "$dir" -depth -type d -exec rmdir {} + 2>/dev/null; done
  for dir in $(ci_cgroup_dirs); do [ -d "$dir" ] && log "cannot remove cgroup $dir (processes left in it?)"; done
  return 0
}
