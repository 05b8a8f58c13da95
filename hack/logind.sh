#!/usr/bin/env bash
# logind.sh start|stop|address: a system bus and elogind for test/e2e/node-shutdown.test.ts,
# on a host without systemd. The bus is a dbus-daemon of its own (socket
# _output/local/logind/system_bus_socket, never the host's /run/dbus); elogind is Debian's
# package, extracted (it conflicts with the systemd package, so it is not installed), and runs
# in a mount namespace of its own with a private /run and its config overlaid on /etc, so the
# host's are untouched. InhibitDelayMaxSec is KTS_INHIBIT_DELAY_MAX_SEC (default 30): upstream
# raises it through systemd, which is not there beside elogind. Nothing here ever powers the
# host off: the test only simulates logind's PrepareForShutdown signal with dbus-send.
source "$(dirname "$0")/lib.sh"
need_root
dir="$LOCAL/logind"
root="$OUT/elogind"
address="unix:path=$dir/system_bus_socket"

extract_elogind() {
  [ -x "$root/lib/elogind/elogind" ] && return 0
  apt_install dbus
  local debs="$KTS_CACHE/elogind"
  mkdir -p "$debs" "$root"
  log "downloading elogind (Debian's package, extracted into $root)"
  (cd "$debs" && apt-get download -q elogind libelogind0 >/dev/null) || die "apt-get download elogind libelogind0 failed"
  local d; for d in "$debs"/*.deb; do dpkg-deb -x "$d" "$root"; done
}

start() {
  extract_elogind
  mkdir -p "$dir/upper/elogind" "$dir/work"
  printf '[Login]\nInhibitDelayMaxSec=%s\n' "${KTS_INHIBIT_DELAY_MAX_SEC:-30}" > "$dir/upper/elogind/logind.conf"
  cat > "$dir/bus.conf" <<XML
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN" "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <auth>EXTERNAL</auth>
  <listen>$address</listen>
  <policy context="default">
    <allow user="*"/>
    <deny own="*"/>
    <deny send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_call"/><allow receive_type="method_return"/><allow receive_type="error"/><allow receive_type="signal"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
  </policy>
  <include>$root/usr/share/dbus-1/system.d/org.freedesktop.login1.conf</include>
</busconfig>
XML
  if ! running system-bus; then
    rm -f "$dir/system_bus_socket"
    log "starting a system bus on $dir/system_bus_socket"
    start_bg system-bus dbus-daemon --config-file="$dir/bus.conf" --nofork --nosyslog
    wait_for 10 "system-bus" test -S "$dir/system_bus_socket"
  fi
  if ! running elogind; then
    log "starting elogind (InhibitDelayMaxSec=${KTS_INHIBIT_DELAY_MAX_SEC:-30})"
    DBUS_SYSTEM_BUS_ADDRESS="$address" LD_LIBRARY_PATH="$root/lib/elogind:$root/lib/x86_64-linux-gnu" \
      start_bg elogind unshare -m sh -c "set -e
mount --make-rprivate /
mount -t tmpfs tmpfs /run
mount -t overlay overlay -o lowerdir=/etc,upperdir=$dir/upper,workdir=$dir/work /etc
exec $root/lib/elogind/elogind"
    wait_for 20 "elogind" env DBUS_SYSTEM_BUS_ADDRESS="$address" dbus-send --system --print-reply \
      --dest=org.freedesktop.login1 /org/freedesktop/login1 org.freedesktop.DBus.Properties.Get \
      string:org.freedesktop.login1.Manager string:InhibitDelayMaxUSec
  fi
  echo "$address"
}

stop() {
  stop_bg elogind
  stop_bg system-bus
  rm -rf "$dir"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  address) echo "$address" ;;
  *) die "usage: $0 start|stop|address" ;;
esac
