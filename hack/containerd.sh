#!/usr/bin/env bash
# Starts containerd for the node with our own config (CRI plugin tuned for this kind of
# host) on the standard socket, or reuses the one this script started before.
# It never writes a CNI config: the kubelet writes its bridge conflist from the Node's podCIDR.
source "$(dirname "$0")/lib.sh"
need_root
apt_install containerd runc containernetworking-plugins iptables

conf_dir="$LOCAL/containerd"
conf="$conf_dir/config.toml"
pause=$(pause_image)
# Per-registry hosts.toml files (containerd reads them at each pull, no restart needed);
# the e2e tests put one there for their local plain-HTTP registry.
certs_dir="$conf_dir/certs.d"
mkdir -p "$conf_dir" "$certs_dir" /etc/cni/net.d
# restrict_oom_score_adj: the host lacks CAP_SYS_RESOURCE, so runc must not lower
#   oom_score_adj (else every RunPodSandbox fails with "can't get final child's PID").
# SystemdCgroup = false: cgroup v1 and no systemd here, so the cgroupfs driver.
# bin_dir: Debian installs the CNI plugins in /usr/lib/cni.
cat > "$conf.new" <<TOML
# Written by hack/containerd.sh; edits are overwritten.
version = 2
root = "/var/lib/containerd"
state = "/run/containerd"

[grpc]
  address = "$CONTAINERD_SOCK"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$pause"
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
    # A second handler name for runc: RuntimeClass objects need a handler the node has,
    # and the upstream conformance tests expect this one (kind configures it too).
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.test-handler]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.test-handler.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "/etc/cni/net.d"
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "$certs_dir"
TOML

# ctr would wait 10 s for a socket that is not there.
sock_ok() { [ -S "$CONTAINERD_SOCK" ] && ctr --address "$CONTAINERD_SOCK" --connect-timeout 2s version >/dev/null 2>&1; }

# Adopt our own containerd when its pid file is gone (same --config path on its command line).
if ! running containerd; then
  for pid in $(live_pids containerd); do
    if tr '\0' ' ' < "/proc/$pid/cmdline" | grep -qF -- "--config $conf"; then mkdir -p "$PIDS"; echo "$pid" > "$PIDS/containerd.pid"; fi
  done
fi

if running containerd; then
  if cmp -s "$conf.new" "$conf"; then
    rm -f "$conf.new"
    sock_ok && { log "containerd already running (pid $(cat "$PIDS/containerd.pid"))"; exit 0; }
    wait_for 30 containerd sock_ok
    exit 0
  fi
  # Restarting containerd leaves running containers alone (their shims keep them).
  log "containerd config changed: restarting containerd"
  stop_bg containerd 30
fi
mv "$conf.new" "$conf"

# Someone else's containerd on the standard socket would run our pods with another config.
if sock_ok || [ -n "$(foreign_containerd_pids)" ]; then
  die "a containerd we did not start is running (pids: $(foreign_containerd_pids | tr '\n' ' ')); stop it first"
fi
rm -f "$CONTAINERD_SOCK"
log "starting containerd (log: $LOGS/containerd.log)"
start_bg containerd containerd --config "$conf"
wait_for 30 containerd sock_ok
log "containerd ready on $CONTAINERD_SOCK (sandbox image $pause)"
