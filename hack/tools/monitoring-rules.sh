#!/usr/bin/env bash
# monitoring-rules.sh: issue 42 item 5. Builds Prometheus's promtool and helm through the Go
# module proxy (each into $KTS_CACHE/NAME-VERSION/bin, hack/lib.sh cached_build, at nice 10),
# renders kube-prometheus-stack's PrometheusRule objects as a user gets them (`helm template`
# with the chart's default values) from the chart in github.com/prometheus-community/helm-charts
# (the proxy serves that repository as a module; it refuses kubernetes-mixin and kube-prometheus,
# whose rules the chart carries as templates), and writes the kubelet and container rule groups
# (test/monitoring/select-groups.ts) to a Prometheus rule file.
#   hack/tools/monitoring-rules.sh [OUT]    OUT: the rule file ($KTS_CACHE/monitoring-rules/kubelet-rules.yaml)
#   hack/tools/monitoring-rules.sh --print-promtool     builds promtool if missing, prints its path
# The chart's dependencies are its sibling charts of the same module download (kube-state-metrics,
# prometheus-node-exporter, prometheus-windows-exporter, copied into its charts/ at the versions
# its Chart.yaml asks for) and, for grafana, whose chart lives in another repository the proxy
# does not serve, an empty stand-in chart of the version asked for with grafana.enabled=false:
# the only value changed from the defaults, and grafana carries no rules.
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

PROMETHEUS_VERSION=${PROMETHEUS_VERSION:-v0.316.0}
HELM_VERSION=${HELM_VERSION:-v3.22.0}
HELM_CHARTS_MODULE=github.com/prometheus-community/helm-charts
HELM_CHARTS_VERSION=${HELM_CHARTS_VERSION:-v0.0.0-20260828105119-ed5d7d9b5933}
export GOTOOLCHAIN=local GOFLAGS="-mod=mod${KTS_GO_P:+ -p=$KTS_GO_P}" CGO_ENABLED=0
KTS_NICE=${KTS_NICE:-10}
command -v go >/dev/null || die "go is not installed (need Go >= 1.26)"
mkdir -p "$KTS_CACHE" "$LOGS"

# go_tool NAME VERSION PKG [TAGS]: $KTS_CACHE/NAME-VERSION/bin/NAME, built from hack/tools/NAME's
# module with the build tags TAGS.
go_tool_build() { go build -trimpath ${TOOL_TAGS:+-tags "$TOOL_TAGS"} -o "$1/$TOOL_NAME" "$TOOL_PKG"; }
go_tool() {
  local dir="$KTS_CACHE/$1-$2/bin"
  if ! have_bins "$dir" "$1"; then
    build_lock "$KTS_CACHE/$1-$2.lock" "$1"
    if ! have_bins "$dir" "$1"; then
      TOOL_NAME=$1 TOOL_PKG=$3 TOOL_TAGS=${4:-} cached_build "$1" "$2" "$dir" "$KTS_ROOT/hack/tools/$1" go_tool_build "$1"
    fi
  fi
  echo "$dir/$1"
}

# promtool without the service discoveries (Prometheus's remove_all_sd tag, plugins/): rules are
# checked and tested on the series of a test file, where no target is discovered. 7.3
# CPU-minutes on a cold cache, against 15.3 with all of them (their cloud SDKs).
PROMTOOL=$(go_tool promtool "$PROMETHEUS_VERSION" github.com/prometheus/prometheus/cmd/promtool remove_all_sd)
if [ "${1:-}" = --print-promtool ]; then echo "$PROMTOOL"; exit 0; fi
HELM=$(go_tool helm "$HELM_VERSION" helm.sh/helm/v3/cmd/helm)

OUT=${1:-$KTS_CACHE/monitoring-rules/kubelet-rules.yaml}
WORK="$KTS_CACHE/monitoring-rules/work"
charts=$(go mod download -json "$HELM_CHARTS_MODULE@$HELM_CHARTS_VERSION" | jq -r .Dir)/charts
[ -d "$charts/kube-prometheus-stack" ] || die "go mod download $HELM_CHARTS_MODULE@$HELM_CHARTS_VERSION has no charts/kube-prometheus-stack"
# One rendering at a time: they share WORK.
build_lock "$KTS_CACHE/monitoring-rules.lock" monitoring-rules
rm -rf "$WORK"; mkdir -p "$WORK"
cp -r "$charts/kube-prometheus-stack" "$WORK/" && chmod -R u+w "$WORK"
stack="$WORK/kube-prometheus-stack"
# Each dependency of Chart.yaml (name, version): its sibling chart when the module has one of a matching version.
# shellcheck disable=SC2016  # JavaScript in single quotes
deps=$(cd "$KTS_ROOT" && node -e '
  const c = require("yaml").parse(require("fs").readFileSync(process.argv[1], "utf8"));
  for (const d of c.dependencies ?? []) console.log(`${d.name}\t${d.version}`);' "$stack/Chart.yaml") \
  || die "cannot read the dependencies of $stack/Chart.yaml"
while IFS=$'\t' read -r name version; do
  [ "$name" = crds ] && continue   # the chart's own, already in its charts/
  if [ -f "$charts/$name/Chart.yaml" ]; then
    have=$(awk '$1 == "version:" {print $2; exit}' "$charts/$name/Chart.yaml")
    # shellcheck disable=SC2053  # a glob on purpose: Chart.yaml's "0.12.*"
    [[ $have == $version ]] || die "the chart asks for $name $version, its sibling in the module is $have"
    cp -r "$charts/$name" "$stack/charts/$name"
  elif [ "$name" = grafana ]; then
    mkdir -p "$stack/charts/grafana"
    printf 'apiVersion: v2\nname: grafana\nversion: %s\ndescription: stand-in (not in %s)\n' "$version" "$HELM_CHARTS_MODULE" > "$stack/charts/grafana/Chart.yaml"
  else
    die "the chart's dependency $name is not in $HELM_CHARTS_MODULE@$HELM_CHARTS_VERSION"
  fi
done <<< "$deps"
"$HELM" template kube-prometheus-stack "$stack" --namespace monitoring --kube-version "${KUBE_VERSION#v}" \
  --set grafana.enabled=false > "$WORK/rendered.yaml" 2> "$WORK/helm.err" \
  || die "helm template failed: $(tail -1 "$WORK/helm.err")"
mkdir -p "$(dirname "$OUT")"
node "$KTS_ROOT/test/monitoring/select-groups-main.ts" < "$WORK/rendered.yaml" > "$OUT.tmp" || die "no rule groups in the rendered chart ($WORK/rendered.yaml)"
"$PROMTOOL" check rules "$OUT.tmp" >&2 || die "promtool check rules refused $OUT.tmp"
mv "$OUT.tmp" "$OUT"
log "wrote $OUT ($(grep -c '^- name:\|^  - name:' "$OUT") groups) from kube-prometheus-stack $(awk '$1 == "version:" {print $2; exit}' "$stack/Chart.yaml")"
echo "$OUT"
