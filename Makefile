# kubelet-ts: `make up` brings up a local cluster with kubelet-ts as its worker node;
# `make test` lints and type-checks, then runs every test (unit and end-to-end on that real stack).
SHELL := /bin/bash
export PATH := $(CURDIR)/_output/bin:$(PATH)
NPM_STAMP := node_modules/.kts-installed

.PHONY: all deps build typecheck lint csi-sanity up down sd-node kind kind-down e2e-kind package test test-containerd1 unit e2e conformance conformance-node conformance-sig-node conformance-kind conformance-storage node-conformance node-e2e-systemd bench bench-floor bench-api bench-cluster bench-hollow chaos clean

all: build

_output/bin/node:
	@bash hack/install-node.sh >/dev/null

# npm runs under Node 24 (first on PATH); reinstalls only when the lock file changes.
$(NPM_STAMP): package-lock.json | _output/bin/node
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@

deps: $(NPM_STAMP)

build: deps
	npm run --silent build

typecheck: deps
	npm run --silent typecheck

# Biome's lint rules (biome.json) over src/ and test/.
lint: deps
	npm run --silent lint

# The local stack (hack/up.sh: a control plane and kubelet-ts as its node, on this host) and the
# local cluster (hack/cluster/up.sh: kubeadm init and join over NODES kubelet-ts nodes, each in
# its own namespaces, with kube-proxy, CoreDNS and flannel). NODES=0: no cluster.
up: build
	bash hack/up.sh
	bash hack/cluster/up.sh

down:
	bash hack/kind/down.sh --all
	bash hack/cluster/down.sh
	bash hack/down.sh

# A systemd node joins the local cluster (`make up` first): SD_NODE (kts-s1 .. kts-s9), a podman
# container with systemd as init, containerd and kubelet-ts as its units (hack/cluster/systemd.sh);
# SD_CGROUP=cgroupfs runs containerd with the cgroupfs driver. `make down` removes it too.
SD_NODE ?= kts-s1
sd-node: build
	bash hack/cluster/node.sh join $(SD_NODE)

# A kind cluster (docs/kind.md): kind v0.33.0 on podman, nodes from the image hack/kind/node-image.sh
# builds here with kubelet-ts as the kubelet, flannel; KIND_CONFIG picks the config (default
# manifests/kind/cluster.yaml). Beside `make up`'s stack, on a network of its own; the image
# preloads the cluster images `make up` builds. `make kind-down` deletes it, `make down` every kind
# cluster. e2e-kind: test/e2e/kind.test.ts alone (make test runs it among the last files).
kind: build
	bash hack/kind/up.sh

# The package a user installs on a node (docs/package.md): _output/package/kubelet-ts_*.deb and the
# same tree as a tarball (hack/package.sh); the kind node image installs it.
package: build
	bash hack/package.sh

kind-down:
	bash hack/kind/down.sh

e2e-kind: build
	node --test --test-reporter=spec test/e2e/kind.test.ts

# Lint, the type-check of src and tests (build's tsconfig.build.json leaves tests out) and the
# unit tests (files in parallel) come first, to fail before the cluster
# is up. e2e tests share one cluster, so their files run one at a time: the local stack's, then
# the slice on the second runtime (test-containerd1), then the cluster's (E2E_LAST) on the stack
# brought up again. The background build (E2E_BG_BUILD) starts before the unit tests, and the
# containerd 1.6 slice comes before the cluster's files: on a cold machine those files wait for
# its builds, which get the minutes of both (none on a warm one, which pays one more hack/up.sh).
# Every part runs even after one fails; the exit status is the first failure's.
# The failing e2e tests of the three parts, each with its error's first line, are printed last
# (hack/e2e-files.sh, E2E_FAILURES): a CI report keeps only the end of the output.
test: export E2E_FAILURES := $(CURDIR)/_output/local/logs/e2e-failures.txt
test: lint typecheck build
	$(E2E_BG_START)
	rm -f $(E2E_FAILURES)
	$(MAKE) --no-print-directory unit
	bash hack/up.sh
	bash hack/e2e-files.sh $(E2E_LOCAL); a=$$?; \
	  $(MAKE) --no-print-directory test-containerd1; b=$$?; \
	  bash hack/up.sh && bash hack/e2e-files.sh $(E2E_LAST); c=$$?; \
	  [ ! -s $(E2E_FAILURES) ] || { echo "failing e2e tests, all parts:"; cat $(E2E_FAILURES); }; \
	  exit $$(( a ? a : b ? b : c ))

# The local stack alone again on Debian's containerd 1.6 (RUNTIME=containerd1, hack/lib.sh) and
# the e2e tests of what the runtime serves on it: pods, containers, exec, logs, the kubelet API
# (stats among it), security contexts, runtime classes and user namespaces (refused there); then that stack goes down, so that the next `make up` brings up the
# default runtime (4 minutes that a CI run, which ends with `make down`, does not spend). (The
# cluster goes down first: the local stack's reset would take the nodes' mounts with it, see
# hack/down.sh.)
# Those files' tests of the kubelet alone (its own server, config and back-off arithmetic, which
# the runtime under it does not change) are left to the containerd 2 run: about 3 minutes.
CONTAINERD1_E2E := pod-lifecycle containers container-logs kubelet-api security-context runtime-class user-namespaces
CONTAINERD1_SKIP := ^(anonymous requests|ExtendWebSocketsToKubelet=false|each path asks|the read-only port|volumeStatsAggPeriod|configz|statusz|tls|enableServer|mergeDefaultEvictionSettings|enableDebuggingHandlers|debug handlers|metrics: the volume manager|restartPolicy OnFailure|crashLoopBackOff|qosReserved|readiness gates)
test-containerd1: build
	bash hack/cluster/down.sh
	bash hack/down.sh
	RUNTIME=containerd1 bash hack/up.sh
	E2E_SKIP='$(CONTAINERD1_SKIP)' bash hack/e2e-files.sh $(CONTAINERD1_E2E:%=test/e2e/%.test.ts); \
	  rc=$$?; bash hack/down.sh && echo "the stack is down; make up brings it back on containerd 2" && exit $$rc

# (package.json's test:unit runs four files at a time: node's default, one fewer than the cores,
# is one on a 2-core CI machine, 5.4 minutes against 3.3.)
unit: deps
	npm run --silent test:unit

# The e2e files one at a time (they share the stack; hack/e2e-files.sh prints each file's time
# and, at the end, where the minutes went). The local stack's first; the cluster's
# (cluster*.test.ts bring the cluster up, hack/cluster/up.sh), the conformance smoke and tracing last.
# What only those need builds meanwhile at the lowest CPU and I/O priority, in the time the
# local files leave idle: promtool and helm with the rules they render (monitoring-rules.test.ts), the cluster's add-ons, upstream's DRA test driver, the CSI hostpath
# driver and its sidecars (test/e2e/cluster-csi.test.ts; hostpathplugin also for the smoke), then the smoke's
# binaries (30 minutes beside the tests on a cold machine; none on a warm one), then the
# OpenTelemetry Collector (test/e2e/tracing.test.ts, about 5 CPU-minutes more), then the cluster's
# and the CSI driver's image tarballs (BUILD_ONLY: no containerd; a cold machine's cluster took 2.3
# minutes to make them) and kind's node images from them (test/e2e/kind.test.ts: the package of
# this commit makes each commit's image new, 80 s; 2.7 minutes cold). A file that needs one
# before it is built waits for that build (hack/lib.sh build_lock).
E2E_LAST := $(wildcard test/e2e/cluster*.test.ts) test/e2e/kind.test.ts test/e2e/conformance-smoke.test.ts test/e2e/tracing.test.ts
E2E_LOCAL := $(filter-out $(E2E_LAST),$(wildcard test/e2e/*.test.ts))
E2E_BG_BUILD := hack/tools/monitoring-rules.sh && hack/build-addons.sh cni-plugins flannel coredns && hack/build-conformance.sh dra-test-driver \
  && hack/build-csi.sh --no-images && hack/build-conformance.sh e2e_node.test && BUILD_ONLY=1 hack/conformance.sh \
  && hack/build-addons.sh otelcol; BUILD_ONLY=1 hack/build-images.sh --cluster --csi && hack/kind/node-image.sh && hack/kind/node-image.sh --upstream
E2E_BG_START := mkdir -p _output/local/logs && (nice -n 19 ionice -c 3 bash -c '$(E2E_BG_BUILD)' >_output/local/logs/build-e2e-bg.log 2>&1 &)
e2e: build
	bash hack/up.sh
	$(E2E_BG_START)
	bash hack/e2e-files.sh $(E2E_LOCAL); \
	  rc=$$?; bash hack/e2e-files.sh $(E2E_LAST) && exit $$rc

# The whole upstream conformance suite of the pinned release (hack/conformance.sh) against the
# local cluster of kubelet-ts nodes; writes docs/conformance.md. FOCUS=regex SKIP=regex PROCS=n
# run other selections. conformance-node: the sig-node and kubelet-facing sig-storage ones only.
conformance: build up
	bash hack/conformance.sh

conformance-node: build up
	SUITE=node bash hack/conformance.sh

# The sig-node tests that are not [Conformance] (nor serial, disruptive, flaky or alpha).
conformance-sig-node: build up
	SUITE=sig-node bash hack/conformance.sh

# Upstream's storage suites on the CSI hostpath driver and the CSI Mock specs (SUITE=storage).
conformance-storage: build up
	SUITE=storage bash hack/conformance.sh

# csi-sanity (kubernetes-csi/csi-test) against the CSI hostpath driver on the local cluster of
# kubelet-ts nodes (hack/cluster/up.sh first): the driver deployed (hack/cluster/csi-hostpath.sh,
# idempotent), then hack/csi-sanity.sh in the node it runs on. SANITY_ARGS: csi-sanity's flags
# (e.g. -ginkgo.focus=Node). JUnit report: _output/cluster/logs/csi-sanity.xml.
csi-sanity: build
	bash hack/cluster/csi-hostpath.sh apply
	bash hack/csi-sanity.sh $(SANITY_ARGS)

# The whole conformance suite against the kind cluster of `make kind` (KIND_CLUSTER, default
# kind): kubelet-ts workers beside an upstream control plane; writes docs/conformance-kind.md.
conformance-kind: build
	CLUSTER=kind bash hack/conformance.sh

# The [NodeConformance] tests of upstream's node e2e suite against the local stack's kubelet-ts.
node-conformance: build up
	bash hack/node-conformance.sh

# Upstream's node e2e tests as its CI runs them, on a systemd node with --start-services: the
# credential provider and ensure-secret-pulled-images ones by default (FOCUS=regex for others).
node-e2e-systemd: build up
	bash hack/node-e2e-systemd.sh

# The same for the CPU, memory and topology managers' node e2e tests (issue 46; the alpha
# pod-level ones left out), their report in _output/node-e2e-resource-managers.
node-e2e-resource-managers: build up
	FOCUS='\[Feature:(CPUManager|MemoryManager|TopologyManager)\]' SKIP='Pod Level Resources' \
	  OUT=$(CURDIR)/_output/node-e2e-resource-managers bash hack/node-e2e-systemd.sh

# Pods churning on the local stack while faults land at random (test/chaos/run.ts), then the
# invariant table; CHAOS_DURATION (default 5m; 1h for the long run) and CHAOS_SEED.
chaos: build up
	node test/chaos/run.ts

clean:
	rm -rf dist node_modules

# Pod start-up and status latency, kubelet RSS and CPU, the apiserver's requests and watch
# events, then the kubelet API under load, on the running local stack: kubelet-ts and, side by
# side, the upstream kubelet on a node of its own (stopped again even on failure). The densities
# of issue #17: 30 pods at once (with kubelet-ts on its relist alone too), 100 at once, and 100
# one by one (upstream's node density method); then docs/startup-latency.svg is redrawn.
# First the runtime's floor (bench-floor), which the table shows each kubelet's start as a ratio of.
BENCH_PAIR := BENCH_ONLY='^kubelet-ts$$|upstream'
bench: build up
	trap 'bash hack/runtime-floor.sh stop; bash hack/upstream-kubelet.sh stop' EXIT; $(BENCH_FLOOR) \
	  && bash hack/upstream-kubelet.sh start \
	  && node test/bench/side-by-side.ts \
	  && BENCH_PODS=100 $(BENCH_PAIR) node test/bench/side-by-side.ts \
	  && BENCH_PODS=100 BENCH_SEQUENTIAL=1 $(BENCH_PAIR) node test/bench/side-by-side.ts \
	  && node test/bench/plot.ts && node test/bench/api.ts --upstream

# The runtime's own floor (issue #47): make bench's pods at its densities (FLOOR_DENSITIES,
# 30,100,100-sequential) created straight through CRI with no kubelet on a third containerd of
# the stack's build (hack/runtime-floor.sh, stopped again even on failure), each burst at the
# concurrencies FLOOR_CONCURRENCY (1,2,4,8,16,all); the best p99 of each density is the floor,
# kept in _output/bench/floor.json for side-by-side.ts.
BENCH_FLOOR := bash hack/runtime-floor.sh start && node test/bench/floor.ts && bash hack/runtime-floor.sh stop
bench-floor: build up
	trap 'bash hack/runtime-floor.sh stop' EXIT; $(BENCH_FLOOR)

# Many nodes against one apiserver: BENCH_NODES (5) workers join the local cluster with kubelet-ts,
# then with the upstream kubelet; the apiserver's CPU and each kubelet's requests at idle and
# with pods (test/bench/cluster.ts; BENCH_NODES, BENCH_PODS_PER_NODE).
bench-cluster: build up
	node test/bench/cluster.ts

# Hollow nodes (issue #47 item 2): NODES kubelet-ts hollow nodes (src/hollow, one process) and as
# many of upstream's kubemark, one kind after the other, each on a throwaway control plane of its
# own (hack/hollow.sh control-plane: etcd :23791, apiserver :17443), not the local stack: memory,
# CPU, the apiserver's CPU, memory, requests and watch events per node, idle and over a churn of
# PODS_PER_NODE pods a node.
bench-hollow: build
	bash hack/build-control-plane.sh
	bash hack/build-control-plane.sh kubemark
	NODES=$${NODES:-10} node test/bench/hollow.ts

# The kubelet API alone under 50 concurrent clients: /stats/summary and /pods latency, kubelet CPU.
bench-api: build up
	node test/bench/api.ts
