#!/usr/bin/env bash
# Starts the node's containerd (RUNTIME: hack/lib.sh's use_runtime) with our own config (CRI
# plugin tuned for this kind of host) on the standard socket, or reuses the one this script
# started before. It never writes a CNI config: the kubelet writes its bridge conflist from
# the Node's podCIDR.
source "$(dirname "$0")/lib.sh"
need_root
install_runtime

conf_dir="$LOCAL/containerd"
conf="$conf_dir/config.toml"
# Per-registry hosts.toml files (containerd reads them at each pull, no restart needed):
# the local registry for the registries it mirrors (hack/registry.sh), and the e2e tests put
# one there for their own plain-HTTP registry.
certs_dir="$conf_dir/certs.d"
mkdir -p "$conf_dir" "$certs_dir" /etc/cni/net.d
registry_hosts "$certs_dir"
# Debian installs the CNI plugins in /usr/lib/cni.
runtime_toml by=hack/containerd.sh root="$CTRD_ROOT" state="$CTRD_STATE" sock="$CONTAINERD_SOCK" \
  runc_root="$CTRD_STATE/runc" cni_bin=/usr/lib/cni cni_conf=/etc/cni/net.d certs="$certs_dir" > "$conf.new"

# ctr would wait 10 s for a socket that is not there.
sock_ok() { [ -S "$CONTAINERD_SOCK" ] && "$CTR" --address "$CONTAINERD_SOCK" --connect-timeout 2s version >/dev/null 2>&1; }

# Adopt our own containerd when its pid file is gone (same --config path on its command line).
if ! running containerd; then
  for pid in $(live_pids containerd); do
    if tr '\0' ' ' < "/proc/$pid/cmdline" | grep -qF -- "--config $conf"; then mkdir -p "$PIDS"; echo "$pid" > "$PIDS/containerd.pid"; fi
  done
fi

if running containerd; then
  check_runtime "$conf_dir" "the local stack's containerd"
  if cmp -s "$conf.new" "$conf"; then
    rm -f "$conf.new"
    sock_ok && { log "containerd already running (pid $(cat "$PIDS/containerd.pid"), $RUNTIME)"; exit 0; }
    wait_for 30 containerd sock_ok
    exit 0
  fi
  # Restarting containerd leaves running containers alone (their shims keep them).
  log "containerd config changed: restarting containerd"
  stop_bg containerd 30
fi
mv "$conf.new" "$conf"
echo "$RUNTIME" > "$conf_dir/runtime"
ln -sfn "$CTR" "$conf_dir/ctr"   # the runtime's own ctr, for the e2e tests

# Someone else's containerd on the standard socket would run our pods with another config.
if sock_ok || [ -n "$(foreign_containerd_pids)" ]; then
  die "a containerd we did not start is running (pids: $(foreign_containerd_pids | tr '\n' ' ')); stop it first"
fi
rm -f "$CONTAINERD_SOCK"
log "starting containerd, $RUNTIME: $("$CTRD" --version | cut -d' ' -f3) (log: $LOGS/containerd.log)"
start_bg containerd env PATH="$CTRD_PATH:$PATH" "$CTRD" --config "$conf"
wait_for 30 containerd sock_ok
log "containerd ready on $CONTAINERD_SOCK (sandbox image $(pause_image))"
