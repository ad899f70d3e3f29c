# Strata's build. Tools come from hack/tools.sh (versions pinned in hack/versions.env) and are
# cached under bin/, so only a first run builds them.
SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec
.DEFAULT_GOAL := help

GO ?= go
TOOLS := hack/tools.sh
CONTROLLER_GEN = $(shell $(TOOLS) path controller-gen)
CRD_REF_DOCS = $(shell $(TOOLS) path crd-ref-docs)
# Test packages run one at a time in each of make test's two streams, the race detector's
# packages and the others (their results are listed after the others'): each envtest package
# starts its own control plane and the machines this runs on have two cores, and many packages
# spend much of their time waiting on a control plane rather than computing. -p 1 also holds go
# test's compiles to one at a time, so make test first compiles every package and test
# dependency at the default parallelism (go list -export, which stores them in the build cache
# and links nothing): from an empty cache, 472 s instead of 597 s to have every test binary
# ready, on a 2-core machine.
TEST_FLAGS ?= -p 1 -count=1 -timeout 30m
# The packages whose goroutines share state (the reconcilers' workers, the autoscaler) run under
# the race detector in make test.
RACE_PKGS := ./controllers ./controllers/pipeline ./controllers/tier ./controllers/autoscaling ./internal/autoscale ./internal/autoscale/prometheus
# make test-short's packages: all of them; -short skips the heavy tests in each
# (docs/development.md#the-inner-loop says what it leaves out and what it costs). Its flags keep
# go test's result cache (no -count=1): a package whose code, test files and inputs did not change
# since it last passed is not linked and run again. SHORT_FLAGS="-count=1" runs everything.
SHORT_PKGS ?= ./...
SHORT_FLAGS ?= -p 2 -timeout 30m

##@ General
.PHONY: help
help: ## Show the targets.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  %-18s %s\n", $$1, $$2 } /^##@/ { printf "\n%s\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Development
.PHONY: manifests
manifests: ## Generate CRDs and RBAC into config/ (and the chart's copies of them).
	$(CONTROLLER_GEN) rbac:roleName=strata-manager crd paths="./api/...;./controllers/...;./cmd/..." \
		output:crd:artifacts:config=config/crd/bases output:rbac:artifacts:config=config/rbac
	@if [ -d charts/strata ]; then $(MAKE) --no-print-directory chart-crds chart-rbac; fi
	@$(MAKE) --no-print-directory observability api-docs

.PHONY: chart-crds
chart-crds: ## Copy the generated CRDs into the Helm chart.
	mkdir -p charts/strata/crds
	cp config/crd/bases/*.yaml charts/strata/crds/

.PHONY: chart-rbac
chart-rbac: ## Copy the generated RBAC rules into the Helm chart (its templates read them).
	mkdir -p charts/strata/files/rbac
	cp config/rbac/role.yaml charts/strata/files/rbac/role.yaml

.PHONY: observability
observability: ## Generate the alert rules (Prometheus, PrometheusRule, Grafana) and dashboards into config/ and the chart.
	$(GO) run ./hack/gen-observability

.PHONY: api-docs
api-docs: ## Generate the API reference (docs/reference/api.md) from the Go types' doc comments.
	$(CRD_REF_DOCS) --source-path=./api/v1alpha1 --config=hack/api-docs/config.yaml \
		--renderer=markdown --output-path=docs/reference/api.md --log-level=error

.PHONY: generate
generate: ## Generate the API's DeepCopy methods.
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths="./api/..."

.PHONY: fmt
fmt: ## gofmt the tree.
	gofmt -l -w $$(git ls-files '*.go')

.PHONY: vet
vet: ## go vet every package, the e2e suite (build tag e2e) included.
	$(GO) vet -tags e2e ./...

.PHONY: build
build: ## Build the manager and the strata CLI into bin/ (static, as in the container image).
	hack/build.sh bin

IMG ?= strata:dev
.PHONY: docker-build
docker-build: ## Build the container image $(IMG) (needs a Docker engine; the Dockerfile runs hack/build.sh).
	docker build -t $(IMG) .

.PHONY: tools
tools: ## Build every pinned tool into bin/ (kube-apiserver, etcd, controller-gen, crd-ref-docs, helm, prometheus, the lab's exporters, cAdvisor and Prometheus Operator, the upstream controllers).
	$(TOOLS) all

##@ Run and test
.PHONY: run
run: ## Start a local control plane, install the CRDs, run the operator and apply the samples.
	@KUBEBUILDER_ASSETS="$$($(TOOLS) envtest)" && export KUBEBUILDER_ASSETS && \
		$(GO) build -o bin/strata-run ./hack/run && exec bin/strata-run $(RUN_FLAGS)

.PHONY: test
test: ## Run all tests: unit tests and envtest tests against a real kube-apiserver; the failed tests are listed at the end.
	@$(GO) build -o bin/testsummary ./hack/testsummary
	@assets="$$($(TOOLS) envtest)"; helm="$$($(TOOLS) path helm)"; \
		pkgs=$$($(GO) list ./... | grep -v -x -F $(addprefix -e github.com/strata-dev/strata/,$(RACE_PKGS:./%=%))); \
		$(GO) list -e -export -deps -test $$pkgs >/dev/null; $(GO) list -e -race -export -deps -test $(RACE_PKGS) >/dev/null; \
		racelog=$$(mktemp); trap 'rm -f "$$racelog"' EXIT; \
		{ plain=0; race=0; \
		KUBEBUILDER_ASSETS="$$assets" $(GO) test -json $(TEST_FLAGS) -race $(addsuffix /,$(RACE_PKGS)) >"$$racelog" & racepid=$$!; \
		KUBEBUILDER_ASSETS="$$assets" HELM="$$helm" $(GO) test -json $(TEST_FLAGS) $$pkgs || plain=$$?; \
		wait $$racepid || race=$$?; cat "$$racelog"; \
		exit $$((plain | race)); } | bin/testsummary

.PHONY: test-short
test-short: ## The inner loop: go test -short, cached (no lab, harness, chaos, image build or controllers envtest but one), failed tests listed at the end.
	@$(GO) build -o bin/testsummary ./hack/testsummary
	@KUBEBUILDER_ASSETS="$$($(TOOLS) envtest)" HELM="$$($(TOOLS) path helm)" \
		$(GO) test -json -short $(SHORT_FLAGS) $(SHORT_PKGS) | bin/testsummary

.PHONY: e2e
e2e: ## Run the end-to-end suite on a new kind cluster (needs docker and the internet; see README).
	HELM="$$($(TOOLS) path helm)" KIND="$$($(TOOLS) path kind)" $(GO) test -tags e2e -count=1 -timeout 90m -v ./e2e/...

.PHONY: lab
lab: ## Run the lab (docs/lab.md): real Kafka, exporters, operator, Prometheus Operator and Prometheus; every generated query's result and alert scenario and, as root, the bandwidth model and cAdvisor on shaped links.
	KUBEBUILDER_ASSETS="$$($(TOOLS) envtest)" HELM="$$($(TOOLS) path helm)" STRATA_PROMETHEUS="$$($(TOOLS) path prometheus)" \
		STRATA_PROMETHEUS_OPERATOR="$$($(TOOLS) path prometheus-operator)" STRATA_LAB_MODEL=1 \
		$(GO) test -count=1 -timeout 75m -v -run 'TestLab|TestBandwidthModel|TestLinkSaturated' ./internal/lab/

.PHONY: upstream
upstream: ## Run the upstream harness (docs/upstream.md): the sample, every golden case and a pipeline's lifecycle reconciled by the real kube-scheduler, kube-controller-manager, KWOK, ECK and the Spark operator.
	$(TOOLS) upstream
	KUBEBUILDER_ASSETS="$$($(TOOLS) envtest)" HELM="$$($(TOOLS) path helm)" \
		$(GO) test -count=1 -timeout 30m -v ./internal/upstream/

.PHONY: chaos
chaos: ## Kill the manager with SIGKILL at random moments of a pipeline's life on the upstream harness (docs/chaos.md): at least 200 kills; CHAOS_SEED picks the moments.
	$(TOOLS) upstream
	KUBEBUILDER_ASSETS="$$($(TOOLS) envtest)" HELM="$$($(TOOLS) path helm)" \
		STRATA_CHAOS_KILLS_PER_ROUND=$(or $(CHAOS_KILLS_PER_ROUND),29) STRATA_CHAOS_SEED=$(or $(CHAOS_SEED),1) \
		$(GO) test -count=1 -timeout 90m -v -run TestCrashAnywhere ./internal/chaos/

.PHONY: standby
standby: ## Kill and freeze the leader of two manager replicas on the upstream harness (docs/standby.md): failover times, no write outside a tenure, no double wipe; STANDBY_LEASE=15s/10s/2s tries other lease timings.
	$(TOOLS) upstream
	KUBEBUILDER_ASSETS="$$($(TOOLS) envtest)" HELM="$$($(TOOLS) path helm)" \
		STRATA_STANDBY_KILLS=$(or $(STANDBY_KILLS),8) STRATA_STANDBY_PAUSES=$(or $(STANDBY_PAUSES),3) STRATA_CHAOS_SEED=$(or $(CHAOS_SEED),1) \
		STRATA_STANDBY_LEASE=$(STANDBY_LEASE) $(GO) test -count=1 -timeout 60m -v -run TestStandbyTakesOver ./internal/chaos/

.PHONY: chaos-api
chaos-api: ## Restart kube-apiserver (drained, and killed after an etcd compaction that expires every watch) at random moments of a pipeline's life, then change a field Strata owns as another field manager (docs/chaos.md); API_FAULTS_PER_STEP restarts per step.
	$(TOOLS) upstream
	KUBEBUILDER_ASSETS="$$($(TOOLS) envtest)" HELM="$$($(TOOLS) path helm)" \
		STRATA_CHAOS_API_FAULTS_PER_STEP=$(or $(API_FAULTS_PER_STEP),2) STRATA_CHAOS_SEED=$(or $(CHAOS_SEED),1) \
		$(GO) test -count=1 -timeout 120m -v -run TestAPIServerFaults ./internal/chaos/

.PHONY: bench
bench: ## Run the benchmarks: the planner's, N pipelines in-process, and the operator's process at 1,000 pipelines (docs/performance.md).
	$(GO) test -run '^$$' -bench . -benchmem $$($(GO) list ./internal/... | grep -v /internal/scale)
	KUBEBUILDER_ASSETS="$$($(TOOLS) envtest)" $(GO) test -run '^$$' -bench Scale -benchtime 1x -timeout 60m ./controllers/pipeline/
	KUBEBUILDER_ASSETS="$$($(TOOLS) envtest)" HELM="$$($(TOOLS) path helm)" $(GO) test -run '^$$' -bench Operator -benchtime 1x -timeout 90m ./internal/scale/

.PHONY: simulate-bench
simulate-bench: ## Replay the sample traces through the autoscaler and print each table against its targets (docs/simulate.md).
	$(GO) test -run '^$$' -bench Targets -benchtime 1x -v ./internal/simulate/ | grep -v '^\s*$$'

.PHONY: traces
traces: ## Regenerate the sample load traces in config/samples/traces.
	$(GO) run ./hack/gen-traces

# Fuzz targets as package:Target; `go test` runs their seed corpora (testdata/fuzz), this runs
# each for FUZZTIME. -short keeps packages with a control plane in TestMain from starting one.
FUZZTIME ?= 30s
FUZZ_TARGETS ?= ./internal/plan:FuzzCompute ./internal/plan:FuzzMemory ./internal/cli:FuzzLoad ./internal/desired:FuzzBuild ./internal/autoscale:FuzzRecommend
.PHONY: fuzz
fuzz: ## Run every fuzz target for FUZZTIME (default 30s) each.
	@for t in $(FUZZ_TARGETS); do \
		echo "fuzz $${t#*:} ($${t%%:*}) for $(FUZZTIME)"; \
		$(GO) test -short -run '^$$' -fuzz "^$${t#*:}$$" -fuzztime $(FUZZTIME) -parallel 2 $${t%%:*} || exit 1; \
	done

.PHONY: verify
verify: ## Fail when generated files are stale or the tree is not gofmt-formatted.
	$(MAKE) --no-print-directory manifests generate
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "not gofmt-formatted:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	@git diff --exit-code -- config api charts docs/reference || { echo "generated files are stale: run 'make manifests generate' and commit"; exit 1; }
	@test -z "$$(git status --porcelain --untracked-files=all -- config api charts docs/reference)" || { echo "untracked generated files:"; git status --porcelain -- config api charts docs/reference; exit 1; }

.PHONY: upstream-crds
upstream-crds: ## Refresh third_party/upstream-crds at the pinned versions (needs the internet).
	hack/upstream-crds.sh

##@ JVM (jvm/: the tiered shuffle plugin and the ingestion job; Maven and Java 17, Spark from Maven Central)
MVN ?= mvn
MVN_FLAGS ?= -B -ntp
JVM_POM := jvm/pom.xml

.PHONY: jvm-build
jvm-build: ## Build jvm/shuffle-plugin/target/strata-shuffle.jar and jvm/ingest-job/target/strata-ingest.jar.
	$(MVN) $(MVN_FLAGS) -q -f $(JVM_POM) package -DskipTests

.PHONY: jvm-test
jvm-test: ## Test the JVM modules (real Spark in local mode) and build their jars.
	$(MVN) $(MVN_FLAGS) -f $(JVM_POM) verify

JOB_IMG ?= strata-spark:dev

.PHONY: job-image
job-image: jvm-build ## Build the Spark image with the ingestion job and the shuffle plugin (jvm/Dockerfile; JOB_IMG=strata-spark:dev).
	docker build -f jvm/Dockerfile -t $(JOB_IMG) jvm

.PHONY: job-bench
job-bench: ## Benchmark the ingestion job end to end, Kafka -> index (minutes; jvm/ingest-job/target/benchmark.txt).
	$(MVN) $(MVN_FLAGS) -f $(JVM_POM) -pl ingest-job test -Pbench

.PHONY: plugin-build plugin-test
plugin-build: jvm-build ## Same as jvm-build (the name before the ingestion job joined the build).
plugin-test: jvm-test ## Same as jvm-test.

.PHONY: plugin-bench
plugin-bench: ## Benchmark stock Spark against the plugin (minutes; jvm/shuffle-plugin/target/benchmark.txt).
	$(MVN) $(MVN_FLAGS) -f $(JVM_POM) -pl shuffle-plugin test -Pbench

.PHONY: upgrade-test
upgrade-test: ## Upgrade from the previous release (hack/versions.env) on the upstream harness: pipelines of every golden case, pod template changes held to CHANGELOG.md (docs/upgrade.md).
	$(TOOLS) upstream
	KUBEBUILDER_ASSETS="$$($(TOOLS) envtest)" HELM="$$($(TOOLS) path helm)" STRATA_UPGRADE_TEST=1 \
		$(GO) test -count=1 -timeout 45m -v -run TestUpgradeWithoutRestarts ./internal/upgrade/

.PHONY: simulate-timeline
simulate-timeline: ## Print the sample step's and flash spike's timelines around their change: where the time goes (docs/simulate.md).
	$(GO) test -count=1 -run TestTimeline -v ./internal/simulate/ | grep -v '^\s*$$'
