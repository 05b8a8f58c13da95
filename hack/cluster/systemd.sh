# A cluster node whose init is systemd (docs/systemd-host.md): a privileged podman container
# booting Debian 12's systemd as PID 1, with its own D-Bus, cgroup namespace and network
# namespace; containerd 2 runs in it as the unit containerd.service and kubelet-ts as the unit
# kubelet.service (manifests/kubelet-ts.service and its kubeadm drop-in), and `kubeadm join`
# runs in it as on any kubeadm host. Its name is kts-sN (N 1..9, hack/cluster/lib.sh node_ip);
# hack/cluster/node.sh join|remove|kubelet|exec|images take it like the other nodes.
# Sourced by hack/cluster/node.sh and hack/systemd-node.sh (after hack/lib.sh); defines things,
# does nothing.
#   SD_CGROUP=systemd (the default: containerd's SystemdCgroup = true, as on a systemd host)
#     or cgroupfs (SystemdCgroup = false: the runtime then reports cgroupfs, and kubelet-ts
#     drives that). It is the node's runtime that says: kubelet-ts uses the driver CRI
#     RuntimeConfig reports, whatever the KubeletConfiguration's cgroupDriver says.
# shellcheck shell=bash disable=SC2034  # (its variables are used by the scripts that source it)

SD_CGROUP_ASKED="${SD_CGROUP:-}"
SD_CGROUP="${SD_CGROUP:-systemd}"
# The root filesystem (debootstrap, once) is cached outside the repo; the image podman imports
# from it is rebuilt when what this file puts into it changes (sd_image).
SD_CACHE="$KTS_CACHE/systemd-node-bookworm"
SD_ROOTFS="$SD_CACHE/rootfs"
SD_IMAGE=localhost/kts-systemd-node:bookworm
# The label every systemd node's container carries (hack/cluster/down.sh finds them by it).
SD_LABEL=kts.cluster.node
# The packages of the node beyond minbase: systemd as init with the system bus, Debian's
# containerd 1.6 and runc (kept for the RuntimeConfig-less path; the node runs the cached
# containerd 2), CNI plugins, and what containerd, CNI, kube-proxy and kubeadm exec.
SD_PACKAGES=systemd,systemd-sysv,dbus,containerd,runc,containernetworking-plugins,iproute2,iptables,procps,util-linux,mount
SD_MIRROR=http://deb.debian.org/debian
# Podman's default nofile (1048576) is above this VM's hard limit (20000): these start
# (../shared/ENVIRONMENT.md: higher ones fail "error setting rlimit").
SD_ULIMITS=(--ulimit nofile=16384:16384 --ulimit nproc=8192:8192)

is_systemd_node() { [[ $1 =~ ^kts-s[1-9]$ ]]; }
# sd_exec NODE CMD...: CMD in the node (with stdin: without -i, podman exec passes none).
sd_exec() { local n=$1; shift; podman exec -i "$n" "$@"; }
sd_running() { [ "$(podman inspect -f '{{.State.Running}}' "$1" 2>/dev/null)" = true ]; }
sd_pid() { podman inspect -f '{{.State.Pid}}' "$1" 2>/dev/null; }

# Debian's podman installs a CNI network of its own, /etc/cni/net.d/87-podman-bridge.conflist
# (10.88.0.0/16): the host's containerd then puts the local stack's pods on it, kubelet-ts leaves
# the podCIDR's network to that "installed add-on", and pods get IPs outside the node's podCIDR.
# The nodes run with --network=none, so the host needs none of it.
sd_install_podman() {
  command -v podman >/dev/null && command -v debootstrap >/dev/null && return 0
  apt_install podman debootstrap
  rm -f /etc/cni/net.d/87-podman-bridge.conflist
}

# sd_rootfs: debootstrap bookworm into the cache (84 s, once).
sd_rootfs() {
  [ -x "$SD_ROOTFS/sbin/init" ] && [ -f "$SD_CACHE/rootfs.done" ] && return 0
  rm -rf --one-file-system "$SD_ROOTFS"
  mkdir -p "$SD_ROOTFS"
  log "debootstrap bookworm into $SD_ROOTFS (log: $SD_CACHE/debootstrap.log)"
  local t0=$SECONDS
  debootstrap --variant=minbase --include="$SD_PACKAGES" bookworm "$SD_ROOTFS" "$SD_MIRROR" > "$SD_CACHE/debootstrap.log" 2>&1 \
    || die "debootstrap failed (see $SD_CACHE/debootstrap.log)"
  log "debootstrap took $((SECONDS - t0))s"
  rm -rf "$SD_ROOTFS"/var/cache/apt/archives/*.deb "$SD_ROOTFS"/var/lib/apt/lists/*
  touch "$SD_CACHE/rootfs.done"
}

# sd_node_files DIR: what the node's systemd finds at boot, written into the root filesystem.
sd_node_files() {
  local r=$1 u
  # No service starts while packages install into it.
  printf '#!/bin/sh\nexit 101\n' > "$r/usr/sbin/policy-rc.d"; chmod +x "$r/usr/sbin/policy-rc.d"
  # Units a container has no use for (and that fail or wait in one).
  for u in systemd-networkd-wait-online.service systemd-timesyncd.service apt-daily.timer apt-daily-upgrade.timer \
    e2scrub_all.timer fstrim.timer man-db.timer dpkg-db-backup.timer getty.target console-getty.service; do
    ln -sf /dev/null "$r/etc/systemd/system/$u"
  done
  # A pod's process that ignores SIGTERM (a shell as a container's PID 1) would hold the
  # node's shutdown for systemd's 90 s default; the node stops within seconds instead.
  mkdir -p "$r/etc/systemd/system.conf.d"
  printf '[Manager]\nDefaultTimeoutStopSec=10s\n' > "$r/etc/systemd/system.conf.d/10-kts.conf"
  # containerd.service is containerd 2 (the cached binaries at their host paths, the cache being
  # bind-mounted read-only) with the node's config in its /etc/kts, in place of Debian's 1.6.
  sd_containerd_unit > "$r/etc/systemd/system/containerd.service"
  rm -rf "$r/etc/systemd/system/containerd.service.d"
  mkdir -p "$r/etc/systemd/system/multi-user.target.wants"
  ln -sf /etc/systemd/system/containerd.service "$r/etc/systemd/system/multi-user.target.wants/containerd.service"
  printf 'runtime-endpoint: unix:///run/containerd/containerd.sock\nimage-endpoint: unix:///run/containerd/containerd.sock\ntimeout: 30\n' \
    > "$r/etc/crictl.yaml"
  ln -sf "$KTS_CACHE/crictl-$CRICTL_VERSION/crictl" "$r/usr/local/bin/crictl"
  ln -sf "$CONTAINERD2_BIN/ctr" "$r/usr/local/bin/ctr"
}

# sd_containerd_unit: upstream containerd's unit, with limits the node allows (no
# CAP_SYS_RESOURCE: nothing may be raised above the container's hard limits). The shims stay in
# the unit's cgroup across a restart (KillMode=process), their containers keep running.
sd_containerd_unit() {
  cat <<UNIT
# Written by hack/cluster/systemd.sh: containerd 2 (hack/build-runtime.sh's, from the build cache).
[Unit]
Description=containerd container runtime (containerd 2, from the kubelet-ts build cache)
After=network.target local-fs.target
ConditionPathExists=/etc/kts/containerd.toml

[Service]
Environment=PATH=$CONTAINERD2_PATH:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
ExecStart=$CONTAINERD2_BIN/containerd --config /etc/kts/containerd.toml
Type=notify
Delegate=yes
KillMode=process
Restart=always
RestartSec=5
LimitNOFILE=16384
LimitNPROC=8192
LimitCORE=infinity
TasksMax=infinity
OOMScoreAdjust=-999

[Install]
WantedBy=multi-user.target
UNIT
}

# sd_image: the node's image, imported from the cached root filesystem with sd_node_files; made
# again when those files change (the image's label kts.files is their hash).
sd_image() {
  sd_install_podman
  [ -x "$CONTAINERD2_BIN/containerd" ] || "$KTS_ROOT/hack/build-runtime.sh" || die "cannot build containerd 2 (hack/build-runtime.sh)"
  local hash have tmp
  tmp=$(mktemp -d)
  mkdir -p "$tmp/usr/sbin" "$tmp/usr/local/bin" "$tmp/etc/systemd/system"
  sd_node_files "$tmp"
  hash=$(tar -C "$tmp" --sort=name --mtime=@0 --owner=0 --group=0 -c . | sha256sum | cut -c1-16)
  rm -rf "$tmp"
  have=$(podman image inspect -f '{{index .Labels "kts.files"}}' "$SD_IMAGE" 2>/dev/null || true)
  [ "$have" = "$hash" ] && return 0
  mkdir -p "$SD_CACHE"
  build_lock "$SD_CACHE.lock" "systemd node image"
  sd_rootfs
  have=$(podman image inspect -f '{{index .Labels "kts.files"}}' "$SD_IMAGE" 2>/dev/null || true)
  [ "$have" = "$hash" ] && return 0
  sd_node_files "$SD_ROOTFS"
  log "podman import $SD_ROOTFS -> $SD_IMAGE"
  local t0=$SECONDS
  tar -C "$SD_ROOTFS" -c . | podman import -q --change 'CMD ["/sbin/init"]' --change 'STOPSIGNAL SIGRTMIN+3' \
    --change "LABEL kts.files=$hash" - "$SD_IMAGE" >/dev/null || die "podman import of $SD_ROOTFS failed"
  log "import took $((SECONDS - t0))s"
}

# sd_containerd_toml NODE: hack/containerd2.sh's config of a cluster node (node.sh
# containerd_config), with the driver SD_CGROUP says.
sd_containerd_toml() {
  local sd=true; [ "$SD_CGROUP" = cgroupfs ] || [ "$SD_CGROUP" = systemd ] || die "SD_CGROUP=$SD_CGROUP: systemd or cgroupfs"
  [ "$SD_CGROUP" = systemd ] || sd=false
  containerd2_toml by="hack/cluster/systemd.sh for node $1 (SD_CGROUP=$SD_CGROUP)" root=/var/lib/containerd state=/run/containerd \
    sock=/run/containerd/containerd.sock netns_under_state=true cni_bin=/opt/cni/bin cni_conf=/etc/cni/net.d \
    certs=/etc/kts/certs.d | sed "s/SystemdCgroup = false/SystemdCgroup = $sd/"
}

# sd_podman_run ARGS...: podman run ARGS in a mount namespace of its own. runc mounts every
# cgroup v1 hierarchy it finds mounted into a privileged container, taking the subsystem from
# the mount point's name: a hierarchy mounted elsewhere (test/chaos's net_cls at
# /run/kts-netcls) fails the start ("invalid argument"). Such mounts stay on the host (unmounted,
# the hierarchy is still listed in every /proc/PID/cgroup and containerd's shims cannot load
# any task's cgroups) and are lazily unmounted in podman's namespace (a slave of the host's) only.
sd_podman_run() {
  local foreign; foreign=$(awk '$3 == "cgroup" && $2 !~ "^/sys/fs/cgroup/" {print $2}' /proc/self/mounts)
  [ -z "$foreign" ] || log "cgroup hierarchies mounted outside /sys/fs/cgroup, hidden from the node: $(echo "$foreign" | tr '\n' ' ')"
  # shellcheck disable=SC2016
  unshare --mount --propagation slave sh -c 'for m in $1; do umount -l "$m" || exit 1; done; shift; exec "$@"' sh "$foreign" \
    podman run "$@"
}

# sd_check_driver NODE: an SD_CGROUP given must be the node's.
sd_check_driver() {
  local was; was=$(cat "$(node_state "$1")/etc/kts/cgroup-driver" 2>/dev/null || true)
  [ -z "$SD_CGROUP_ASKED" ] || [ -z "$was" ] || [ "$was" = "$SD_CGROUP_ASKED" ] \
    || die "node $1 runs containerd with SD_CGROUP=$was, not $SD_CGROUP_ASKED: remove it first"
}

# sd_add NODE: boots the node (its state, the container, its address) and starts its
# containerd and its images (SD_IMAGES: hack/build-images.sh's flags, default --cluster); the
# kubelet's unit is installed and enabled (kubeadm join starts it).
sd_add() {
  local n=$1 ip state pid d; ip=$(node_ip "$n"); state=$(node_state "$n")
  host_network
  sd_check_driver "$n"
  if sd_running "$n"; then log "node $n is running"; else
    sd_image
    if podman container exists "$n"; then
      log "node $n: container exists but does not run: removing it (its state stays)"
      sd_remove_container "$n"
    fi
    # The node's disk: its own dirs as host directories (containerd's root must not be the
    # container's overlay: overlayfs refuses an overlay upper directory).
    for d in "${NODE_DIRS[@]}"; do mkdir -p "$state/$d"; done
    printf 'nameserver %s\n' "$CLUSTER_GW" > "$state/etc/kts/resolv.conf"
    cp -f /usr/lib/cni/{bridge,host-local,loopback,portmap} "$state/opt/cni/bin/"
    registry_hosts "$state/etc/kts/certs.d"
    sd_containerd_toml "$n" > "$state/etc/kts/containerd.toml"
    echo containerd2 > "$state/etc/kts/runtime"
    echo "$SD_CGROUP" > "$state/etc/kts/cgroup-driver"
    local mounts=(-v "$state/etc/kts/resolv.conf:/etc/resolv.conf")
    for d in "${NODE_DIRS[@]}"; do mounts+=(-v "$state/$d:/$d"); done
    # The repo and the build cache at their host paths (read-only): the launcher, _output/bin
    # (symlinks into the cache) and containerd's config name them.
    mounts+=(-v "$KTS_CACHE:$KTS_CACHE:ro" -v "$KTS_ROOT:$KTS_ROOT:ro")
    local nm; nm=$(readlink -f "$KTS_ROOT/node_modules" 2>/dev/null || true)
    [ -n "$nm" ] && [ -d "$nm" ] && [ "${nm#"$KTS_ROOT"/}" = "$nm" ] && mounts+=(-v "$nm:$nm:ro")
    log "node $n: booting systemd in a podman container ($SD_IMAGE), $ip on $CLUSTER_BRIDGE, SD_CGROUP=$SD_CGROUP"
    local t0=$SECONDS
    # --systemd=false: podman's --systemd=always bind-mounts the host's whole name=systemd
    # hierarchy on cgroup v1; the tmpfs mounts and the stop signal are what systemd needs of it.
    sd_podman_run -d --name "$n" --hostname "$n" --label "$SD_LABEL=systemd" --privileged --cgroupns=private \
      --systemd=false --tmpfs /run --tmpfs /run/lock --tmpfs /tmp --stop-signal SIGRTMIN+3 \
      --network=none "${SD_ULIMITS[@]}" "${mounts[@]}" "$SD_IMAGE" /sbin/init > "$state/etc/kts/podman.cid" 2>"$CLUSTER_LOGS/$n-podman.log" \
      || die "podman run of node $n failed: $(tail -1 "$CLUSTER_LOGS/$n-podman.log")"
    pid=$(sd_pid "$n")
    # eth0 on the cluster bridge, as the namespace nodes' (its FORWARD drop keeps packets here).
    ip link del "veth-$n" 2>/dev/null || true
    ip link add "veth-$n" type veth peer name eth0 netns "$pid" || die "cannot create the veth pair of node $n"
    ip link set "veth-$n" master "$CLUSTER_BRIDGE" up
    nsenter -t "$pid" -n sh -c "ip link set lo up && ip addr add $ip/$CLUSTER_PREFIX dev eth0 && ip link set eth0 up && ip route add default via $CLUSTER_GW && sysctl -qw net.ipv4.ip_forward=1" \
      || die "cannot configure the network of node $n"
    local end=$((SECONDS + 90)) st=""
    until st=$(sd_exec "$n" systemctl is-system-running 2>/dev/null); [ "$st" = running ] || [ "$st" = degraded ]; do
      [ $SECONDS -lt $end ] || die "systemd in node $n did not finish booting within 90s (state: $st)"
      sleep 0.2
    done
    [ "$st" = running ] || log "node $n: systemd is $st: $(sd_exec "$n" systemctl --failed --no-legend --plain | awk '{printf "%s ", $1}')"
    log "node $n: systemd $st after $((SECONDS - t0))s"
  fi
  sd_kubelet_unit "$n"
  local sock end; sock=$(node_sock "$n"); end=$((SECONDS + 30))
  until "$CONTAINERD2_BIN/ctr" --address "$sock" --connect-timeout 1s version >/dev/null 2>&1; do
    [ $SECONDS -lt $end ] || die "containerd in node $n did not answer within 30s (podman exec $n journalctl -u containerd)"
    sleep 0.2
  done
  # shellcheck disable=SC2086 # flags, split on purpose
  images "$n" ${SD_IMAGES:---cluster}
}

# sd_kubelet_unit NODE: kubelet-ts as upstream's packages install the kubelet: the unit
# (manifests/kubelet-ts.service) as kubelet.service, which kubeadm restarts, with kubeadm's
# drop-in (manifests/10-kubeadm.conf); /usr/bin/kubelet-ts runs the repo's dist/cli/main.js
# on the cache's Node with the flags node.sh's kubelets get; `kubelet` (kubeadm's preflight runs
# `kubelet --version`) is the same. Enabled, not started: kubeadm join starts it.
sd_kubelet_unit() {
  local n=$1 tmp; tmp=$(mktemp -d)
  [ -f "$KTS_ROOT/dist/cli/main.js" ] || die "$KTS_ROOT/dist/cli/main.js is missing: run make build"
  mkdir -p "$tmp/usr/bin" "$tmp/etc/systemd/system/kubelet.service.d" "$tmp/etc/default"
  printf '#!/bin/sh\n# Written by hack/cluster/systemd.sh.\nexec %s "$@"\n' "${KUBELET_TS_CMD[*]}" > "$tmp/usr/bin/kubelet-ts"
  chmod 755 "$tmp/usr/bin/kubelet-ts"
  ln -s kubelet-ts "$tmp/usr/bin/kubelet"
  cp "$KTS_ROOT/manifests/kubelet-ts.service" "$tmp/etc/systemd/system/kubelet.service"
  cp "$KTS_ROOT/manifests/10-kubeadm.conf" "$tmp/etc/systemd/system/kubelet.service.d/"
  echo 'KUBELET_EXTRA_ARGS="--v 2"' > "$tmp/etc/default/kubelet"
  tar -C "$tmp" --owner=0 --group=0 -c . | sd_exec "$n" tar -C / -x --no-overwrite-dir || { rm -rf "$tmp"; die "cannot install kubelet.service in node $n"; }
  rm -rf "$tmp"
  sd_exec "$n" sh -c 'systemctl daemon-reload && systemctl enable kubelet.service 2>/dev/null' || die "cannot enable kubelet.service in node $n"
}

# sd_join NODE: kubeadm join in the node (kubeadm's own systemd path: it writes the kubelet's
# files, restarts kubelet.service and waits for the TLS bootstrap), with the JoinConfiguration
# join() writes (node.sh). Fails at once, with the kubelet's last line, when the kubelet does
# not stay up (kubeadm would wait minutes).
sd_join() {
  local n=$1 state; state=$(node_state "$n")
  [ -f "$CLUSTER_KUBECONFIG" ] || die "no cluster to join: make up first"
  sd_check_driver "$n"
  if [ -f "$state/etc/kubernetes/kubelet.conf" ]; then
    sd_running "$n" || die "node $n was joined but its container does not run: remove it first"
    sd_kubelet "$n" start
    sd_wait_ready "$n"
    return
  fi
  sd_add "$n"
  write_join_config "$n"
  # The cluster's KubeletConfiguration (kubeadm's kubelet-config ConfigMap) says cgroupDriver:
  # cgroupfs for the namespace nodes (hack/cluster/up.sh); kubeadm's per-node patch gives this
  # node the driver of its runtime, as kubeadm's default would on a systemd cluster.
  mkdir -p "$state/etc/kts/kubeadm-patches"
  printf 'cgroupDriver: %s\n' "$SD_CGROUP" > "$state/etc/kts/kubeadm-patches/kubeletconfiguration+merge.yaml"
  printf 'patches: {directory: /etc/kts/kubeadm-patches}\n' >> "$state/etc/kts/kubeadm.yaml"
  save_kernel_tunables
  log "node $n: kubeadm join (log: $CLUSTER_LOGS/$n-kubeadm.log)"
  sd_exec "$n" env PATH="$BIN:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
    kubeadm join --config /etc/kts/kubeadm.yaml "$PREFLIGHT" >"$CLUSTER_LOGS/$n-kubeadm.log" 2>&1 &
  local pid=$! end=$((SECONDS + 300)) state
  while kill -0 $pid 2>/dev/null; do
    # The kubelet exited and systemd waits to start it again (RestartSec).
    state=$(sd_exec "$n" systemctl show -p SubState,NRestarts kubelet.service 2>/dev/null | tr '\n' ' ' || true)
    if [[ $state = *SubState=auto-restart* ]] || [[ ! $state =~ NRestarts=0 ]] && [[ $state = *NRestarts=* ]]; then
      kill $pid 2>/dev/null; wait $pid 2>/dev/null || true
      die "node $n: kubelet.service exits: $(sd_kubelet_error "$n")"
    fi
    [ $SECONDS -lt $end ] || { kill $pid 2>/dev/null; die "kubeadm join on $n did not finish in 300s (see $CLUSTER_LOGS/$n-kubeadm.log)"; }
    sleep 0.5
  done
  wait $pid || die "kubeadm join on $n failed: $(grep -m1 -E '^(error|\[ERROR)' "$CLUSTER_LOGS/$n-kubeadm.log" || tail -1 "$CLUSTER_LOGS/$n-kubeadm.log")"
  log "node $n joined"
  sd_wait_ready "$n"
}

# sd_wait_ready NODE: until the Node is Ready (its CNI, flannel's DaemonSet pod, comes up ~10 s
# after the join), or fails with the kubelet's last error line.
sd_wait_ready() {
  local n=$1 end=$((SECONDS + 120)) t0=$SECONDS
  until [ "$(ckubectl get node "$n" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ]; do
    [ $SECONDS -lt $end ] || die "node $n not Ready within 120s: $(ckubectl get node "$n" -o jsonpath='{.status.conditions[?(@.type=="Ready")].message}' 2>&1) $(sd_kubelet_error "$n")"
    sleep 1
  done
  log "node $n Ready after $((SECONDS - t0))s"
}

# sd_kubelet_error NODE: the kubelet's last error line in the node's journal.
sd_kubelet_error() {
  sd_exec "$1" journalctl -u kubelet.service --no-pager -o cat -n 200 2>/dev/null \
    | grep -iE 'error|fail|refus|unsupported|supports only' | grep -v '^kubelet.service' | tail -1 | cut -c1-400
}

sd_kubelet() {
  local n=$1
  case "$2" in
    start | stop | restart)
      sd_running "$n" || die "node $n is not running (hack/cluster/node.sh join $n)"
      [ "$2" = stop ] || [ -f "$(node_state "$n")/var/lib/kubelet/config.yaml" ] \
        || die "node $n has no /var/lib/kubelet/config.yaml yet (kubeadm join writes it)"
      [ "$2" = stop ] || save_kernel_tunables
      sd_exec "$n" systemctl "$2" kubelet.service || die "systemctl $2 kubelet in node $n failed"
      ;;
    status)
      local st; st=$(sd_exec "$n" systemctl is-active kubelet.service 2>/dev/null || true)
      if [ "$st" = active ]; then echo "node $n: kubelet.service active"; else echo "node $n: kubelet.service ${st:-unknown}"; return 1; fi
      ;;
    *) die "usage: hack/cluster/node.sh kubelet NODE start|stop|restart|status" ;;
  esac
}

# sd_cgroup_of CID: the node's cgroup on the host (podman's cgroupfs manager: libpod-<id> below
# /libpod_parent in every v1 hierarchy; the node's cgroup namespace has its root there).
sd_remove_cgroups() {
  local cid=$1 d
  [ -n "$cid" ] || return 0
  for d in /sys/fs/cgroup/*/libpod_parent/libpod-"$cid"; do
    [ -d "$d" ] || continue
    find "$d" -depth -type d -exec rmdir {} + 2>/dev/null || true
    [ ! -d "$d" ] || log "cannot remove the cgroup $d (processes: $(find "$d" -name cgroup.procs -exec cat {} + | head -3 | tr '\n' ' '))"
  done
  # podman's own parent (and conmon's cgroup in it), when no other podman container is left.
  if [ -z "$(podman ps -aq 2>/dev/null)" ]; then
    for d in /sys/fs/cgroup/*/libpod_parent; do
      [ -d "$d" ] || continue
      rmdir "$d/conmon" 2>/dev/null || true
      rmdir "$d" 2>/dev/null || log "cannot remove $d (not empty: $(find "$d" -mindepth 1 -maxdepth 1 -printf "%f " | head -c 200))"
    done
  fi
}

# sd_remove_container NODE: stops (systemd shuts down its units) and removes the container,
# then what it leaves below its cgroup on the host.
sd_remove_container() {
  local n=$1 cid
  cid=$(podman inspect -f '{{.Id}}' "$n" 2>/dev/null || cat "$(node_state "$n")/etc/kts/podman.cid" 2>/dev/null || true)
  if podman container exists "$n" 2>/dev/null; then
    # systemd stops its units (the kubelet, containerd) at once; what then ignores its SIGTERM
    # (a pod's shell as PID 1) is killed with the node's PID namespace after 5 s.
    log "node $n: stopping its container"
    podman stop -t 5 "$n" >/dev/null 2>&1 || true
    podman rm -f "$n" >/dev/null || die "podman rm -f $n failed"
  fi
  sd_remove_cgroups "$cid"
}

# sd_remove NODE: the node's container stops first, then its veth, its cgroups and its state go,
# and it leaves the cluster (its Node object: last, else its kubelet registers it again while
# the container stops). Safe twice.
sd_remove() {
  local n=$1 state; state=$(node_state "$n")
  if command -v podman >/dev/null; then sd_remove_container "$n"; fi
  ip link del "veth-$n" 2>/dev/null || true
  if [ -d "$state" ]; then
    ! grep -qF " $state/" /proc/self/mounts || die "something is still mounted under $state: $(grep -F " $state/" /proc/self/mounts | head -1)"
    rm -rf --one-file-system "$state"
  fi
  if [ -f "$CLUSTER_KUBECONFIG" ] && [ -e "$NS_DIR/$CP_NODE.mnt" ]; then
    ckubectl delete node "$n" --wait=false --request-timeout=10s >/dev/null 2>&1 || true
  fi
  log "node $n removed"
}
