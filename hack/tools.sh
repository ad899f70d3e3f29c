#!/usr/bin/env bash
# Builds the project's tools from the Go module proxy into bin/, one folder per tool and version,
# so that a second run finds them and takes seconds. Nothing is downloaded but Go modules: the
# machines Strata is developed and tested on reach no other host, and users with the internet
# get the same pinned binaries the same way.
#
#   hack/tools.sh path NAME   build NAME if needed and print its path
#                             NAME: kube-apiserver etcd controller-gen crd-ref-docs helm prometheus
#                             promtool kind kafka_exporter elasticsearch_exporter lab-cadvisor
#                             kube-scheduler kube-controller-manager kwok eck-operator spark-operator
#                             (the upstream controllers `make upstream` runs) prometheus-operator
#                             (the lab's: it generates the lab's Prometheus configuration)
#   hack/tools.sh envtest     print a directory holding kube-apiserver and etcd for envtest:
#                             $KUBEBUILDER_ASSETS when set, else the pinned builds
#   hack/tools.sh upstream    build what the upstream harness runs (internal/upstream)
#   hack/tools.sh all         build every tool
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck disable=SC1091
source <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$root/hack/versions.env")
bin="$root/bin"
build="$bin/.build"

# The time on each line tells, in a log, what each first build took.
say() { printf '[tools %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

# progress reads `go build -v` output (one package per line) and prints a line every 100
# packages, so a first build of several minutes does not look hung.
progress() {
  local what=$1 n=0 line
  while IFS= read -r line; do
    case $line in
      "#"*|*.go:[0-9]*) printf '%s\n' "$line" >&2 ;;
    esac
    n=$((n + 1))
    if ((n % 100 == 0)); then say "$what: $n packages compiled"; fi
  done
  say "$what: $n packages compiled, linking done"
}

gobuild() { # gobuild WHAT OUT [go build args...]
  local what=$1 out=$2
  shift 2
  set -o pipefail
  go build -v -o "$out.tmp" "$@" 2>&1 | progress "$what"
  mv "$out.tmp" "$out"
}

# wrapper DIR MODULE: an empty module in DIR to build a tool inside.
wrapper() {
  rm -rf "$1"
  mkdir -p "$1"
  (cd "$1" && go mod init "$2" >/dev/null 2>&1)
}

# build_kube CMD OUT: kube-apiserver, kube-scheduler or kube-controller-manager of the pinned
# release, all three from one wrapper module (they share most packages, so the second and third
# build reuse the first's compile cache).
build_kube() {
  local cmd=$1 out=$2 dir="$build/kube-apiserver-$KUBERNETES_VERSION"
  local minor staging gomod
  say "building $cmd $KUBERNETES_VERSION from the Go module proxy (a first build takes minutes)"
  if [ ! -f "$dir/.resolved" ]; then
  wrapper "$dir" strata.local/kube-apiserver
  cd "$dir"
  # k8s.io/kubernetes points its k8s.io/* staging modules at ./staging; the wrapper points them
  # at the published modules of the same release, read off the release's own go.mod.
  gomod=$(go mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" | sed -n 's/.*"GoMod": "\(.*\)",*/\1/p')
  staging="v0.${KUBERNETES_VERSION#v1.}"
  grep -oE '^\s*k8s\.io/[a-z0-9-]+ => \./staging' "$gomod" | awk '{print $1}' | while read -r m; do
    go mod edit -replace "$m=$m@$staging"
  done
  go mod edit -require "k8s.io/kubernetes@$KUBERNETES_VERSION"
  say "resolving the Kubernetes commands' dependencies"
  go get "k8s.io/kubernetes/cmd/kube-apiserver@$KUBERNETES_VERSION" \
    "k8s.io/kubernetes/cmd/kube-scheduler@$KUBERNETES_VERSION" \
    "k8s.io/kubernetes/cmd/kube-controller-manager@$KUBERNETES_VERSION" 2>&1 | grep -v '^go: ' >&2 || true
  touch .resolved
  fi
  cd "$dir"
  minor=$(echo "$KUBERNETES_VERSION" | cut -d. -f2)
  local ld="" pkg
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld="$ld -X $pkg.gitVersion=$KUBERNETES_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
    ld="$ld -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
  done
  gobuild "$cmd" "$out" -trimpath -ldflags "-s -w $ld" "k8s.io/kubernetes/cmd/$cmd"
  cd "$root"
}

build_etcd() {
  local out=$1 dir="$build/etcd-$ETCD_VERSION"
  say "building etcd $ETCD_VERSION"
  wrapper "$dir" strata.local/etcd
  cat >"$dir/main.go" <<'EOF'
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
EOF
  (cd "$dir" && go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION" 2>/dev/null && go mod tidy >/dev/null 2>&1 &&
    gobuild etcd "$out" -trimpath -ldflags "-s -w" .)
}

build_prometheus() { # build_prometheus OUT CMD
  local out=$1 cmd=$2 dir="$build/prometheus-$PROMETHEUS_VERSION"
  say "building $cmd $PROMETHEUS_VERSION"
  # .resolved marks a wrapper whose dependencies all resolved: a failed `go get` (a module the
  # proxy does not serve) leaves a partial go.sum, which must not pass for a finished one.
  if [ ! -f "$dir/.resolved" ]; then
    wrapper "$dir" strata.local/prometheus
    (cd "$dir" && go mod edit -require "github.com/prometheus/prometheus@$PROMETHEUS_VERSION" &&
      go get "github.com/prometheus/prometheus/cmd/prometheus@$PROMETHEUS_VERSION" \
        "github.com/prometheus/prometheus/cmd/promtool@$PROMETHEUS_VERSION" 2>&1 |
        { grep -v '^go: downloading' >&2 || true; } && touch .resolved) ||
      { say "resolving prometheus $PROMETHEUS_VERSION failed"; exit 1; }
  fi
  # remove_all_sd: no service discovery but file, HTTP and static (Prometheus's README, "Service
  # discovery plugins"), which leaves out the cloud providers' SDKs, about 240 of the two
  # commands' 1,500 packages. The lab rewrites the operator's kubernetes_sd_configs into file_sd
  # (internal/lab/promconfig.go) and the autoscaler's test scrapes a static target; promtool keeps
  # its own import of Kubernetes discovery.
  (cd "$dir" && gobuild "$cmd" "$out" -trimpath -tags remove_all_sd -ldflags "-s -w" "github.com/prometheus/prometheus/cmd/$cmd")
}

# build_prometheus_operator OUT: the Prometheus Operator's cmd/operator, in a wrapper module. Its
# own go.mod replaces its two nested modules (pkg/apis/monitoring, pkg/client) with ./pkg/...,
# which a module's zip leaves out (they are modules of their own), so it cannot build in its own
# directory as build_in_module does; the wrapper requires the nested modules at the same release,
# which is what the replacements point at.
build_prometheus_operator() {
  local out=$1 mod=github.com/prometheus-operator/prometheus-operator v=v$PROMETHEUS_OPERATOR_VERSION
  local dir="$build/prometheus-operator-$v"
  say "building prometheus-operator $v (a first build takes minutes)"
  if [ ! -f "$dir/.resolved" ]; then
    wrapper "$dir" strata.local/prometheus-operator
    (cd "$dir" && go mod edit -require "$mod@$v" -require "$mod/pkg/apis/monitoring@$v" -require "$mod/pkg/client@$v" &&
      go get "$mod/cmd/operator@$v" 2>&1 | { grep -v '^go: downloading' >&2 || true; } && touch .resolved) ||
      { say "resolving prometheus-operator $v failed"; exit 1; }
  fi
  # The version its Makefile stamps in (GO_BUILD_LDFLAGS): the operator logs it and writes it
  # into the objects it manages.
  (cd "$dir" && gobuild prometheus-operator "$out" -trimpath \
    -ldflags "-s -w -X github.com/prometheus/common/version.Version=$PROMETHEUS_OPERATOR_VERSION" "$mod/cmd/operator")
}

# build_kafka_exporter OUT: the Kafka exporter from its vendored source (third_party/kafka_exporter,
# its own module: the proxy refuses github.com/danielqsj/kafka_exporter, its dependencies it serves).
build_kafka_exporter() {
  local out=$1 src="$root/third_party/kafka_exporter"
  local have
  have=$(cat "$src/VERSION")
  if [ "$have" != "$KAFKA_EXPORTER_VERSION" ]; then
    say "third_party/kafka_exporter holds $have, hack/versions.env pins $KAFKA_EXPORTER_VERSION: run hack/kafka-exporter.sh"
    exit 1
  fi
  say "building kafka_exporter $KAFKA_EXPORTER_VERSION"
  (cd "$src" && gobuild kafka_exporter "$out" -trimpath -ldflags "-s -w" .)
}

# build_lab_cadvisor OUT: hack/lab-cadvisor, a module of its own (cAdvisor's dependencies stay
# out of the operator's go.mod), whose go.mod must require the pinned cAdvisor.
build_lab_cadvisor() {
  local out=$1 src="$root/hack/lab-cadvisor" have
  have=$(cd "$src" && go list -m -f '{{.Version}}' github.com/google/cadvisor)
  if [ "$have" != "$CADVISOR_VERSION" ]; then
    say "hack/lab-cadvisor/go.mod requires cadvisor $have, hack/versions.env pins $CADVISOR_VERSION: run (cd hack/lab-cadvisor && go get github.com/google/cadvisor@$CADVISOR_VERSION && go mod tidy)"
    exit 1
  fi
  (cd "$src" && gobuild lab-cadvisor "$out" -trimpath -ldflags "-s -w" .)
}

# build_module OUT MODULE@VERSION: a tool whose main package is its module's root, built in the
# module's own directory with its own go.sum. For modules the proxy serves by version but not in
# its version list: `go install m@v` asks the list (for deprecations) and fails with 403 there.
build_module() {
  local out=$1 mod=$2 dir
  say "building ${mod%@*} ${mod#*@}"
  dir=$(go mod download -json "$mod" | sed -n 's/.*"Dir": "\(.*\)",*/\1/p')
  [ -n "$dir" ] || { say "downloading $mod failed"; exit 1; }
  (cd "$dir" && gobuild "${mod%@*}" "$out" -trimpath -ldflags "-s -w" .)
}

# build_in_module OUT MODULE@VERSION PKG: a command inside a module (not at its root), built in
# the module's own directory so its replace directives and go.sum apply: the upstream
# controllers the harness runs (ECK, the Spark operator, KWOK).
build_in_module() {
  local out=$1 mod=$2 pkg=$3 ld=${4:-} dir
  say "building ${mod%@*}/$pkg ${mod#*@} (a first build takes minutes)"
  dir=$(go mod download -json "$mod" | sed -n 's/.*"Dir": "\(.*\)",*/\1/p')
  [ -n "$dir" ] || { say "downloading $mod failed"; exit 1; }
  (cd "$dir" && gobuild "${mod%@*}" "$out" -trimpath -ldflags "-s -w $ld" "./$pkg")
}

# module_files MODULE@VERSION OUT FILE...: FILEs of a module, concatenated as YAML documents into OUT.
module_files() {
  local mod=$1 out=$2 dir f
  shift 2
  dir=$(go mod download -json "$mod" | sed -n 's/.*"Dir": "\(.*\)",*/\1/p')
  for f in "$@"; do printf -- '---\n'; cat "$dir/$f"; done >"$out.tmp"
  mv "$out.tmp" "$out"
}

# go_install OUT PKG@VERSION [LDFLAGS]: for tools whose own module builds as it is.
go_install() {
  local out=$1 pkg=$2 ld=${3:-} tmp
  say "building ${pkg##*/}"
  tmp=$(mktemp -d)
  GOBIN="$tmp" go install -trimpath -ldflags "-s -w $ld" "$pkg"
  mv "$tmp"/* "$out"
  rmdir "$tmp"
}

# helm_ldflags: what Helm's own Makefile stamps in: its version, and the Kubernetes version of its
# client-go (1.<minor>) as the default of `helm template` and `helm lint` (else v1.20, which a
# chart's kubeVersion constraint refuses).
helm_ldflags() {
  local gomod minor pkg ld="-X helm.sh/helm/v3/internal/version.version=$HELM_VERSION"
  gomod=$(go mod download -json "helm.sh/helm/v3@$HELM_VERSION" | sed -n 's/.*"GoMod": "\(.*\)",*/\1/p')
  minor=$(sed -n 's/^[[:space:]]*k8s\.io\/client-go v0\.\([0-9]*\)\..*/\1/p' "$gomod" | head -1)
  for pkg in helm.sh/helm/v3/pkg/chartutil helm.sh/helm/v3/pkg/lint/rules; do
    ld="$ld -X $pkg.k8sVersionMajor=1 -X $pkg.k8sVersionMinor=$minor"
  done
  echo "$ld"
}

tool_path() {
  local name=$1 version
  case $name in
    kube-apiserver | kube-scheduler | kube-controller-manager) version=$KUBERNETES_VERSION ;;
    kwok) version=$KWOK_VERSION ;;
    eck-operator) version=v$ECK_VERSION ;;
    spark-operator) version=v$SPARK_OPERATOR_VERSION ;;
    prometheus-operator) version=v$PROMETHEUS_OPERATOR_VERSION ;;
    etcd) version=$ETCD_VERSION ;;
    controller-gen) version=$CONTROLLER_TOOLS_VERSION ;;
    crd-ref-docs) version=$CRD_REF_DOCS_VERSION ;;
    helm) version=$HELM_VERSION ;;
    kind) version=$KIND_VERSION ;;
    prometheus | promtool) version=$PROMETHEUS_VERSION ;;
    kafka_exporter) version=$KAFKA_EXPORTER_VERSION ;;
    elasticsearch_exporter) version=$ELASTICSEARCH_EXPORTER_VERSION ;;
    lab-cadvisor) version=$CADVISOR_VERSION ;;
    *) say "unknown tool $name"; exit 2 ;;
  esac
  local out="$bin/$name-$version/$name"
  if [ ! -x "$out" ]; then
    mkdir -p "$(dirname "$out")"
    case $name in
      kube-apiserver | kube-scheduler | kube-controller-manager) build_kube "$name" "$out" ;;
      kwok) build_in_module "$out" "sigs.k8s.io/kwok@$version" cmd/kwok ;;
      eck-operator) build_in_module "$out" "github.com/elastic/cloud-on-k8s/v3@$version" cmd \
        "-X github.com/elastic/cloud-on-k8s/v3/pkg/about.version=$ECK_VERSION" ;;
      spark-operator) build_in_module "$out" "github.com/kubeflow/spark-operator/v2@$version" cmd/operator ;;
      # The version its Makefile stamps in (GO_BUILD_LDFLAGS): the operator writes it into the
      # objects it manages and logs it.
      prometheus-operator) build_prometheus_operator "$out" ;;
      etcd) build_etcd "$out" ;;
      controller-gen) go_install "$out" "sigs.k8s.io/controller-tools/cmd/controller-gen@$version" ;;
      crd-ref-docs) go_install "$out" "github.com/elastic/crd-ref-docs@$version" ;;
      helm) go_install "$out" "helm.sh/helm/v3/cmd/helm@$version" "$(helm_ldflags)" ;;
      kind) go_install "$out" "sigs.k8s.io/kind@$version" ;;
      prometheus | promtool) build_prometheus "$out" "$name" ;;
      kafka_exporter) build_kafka_exporter "$out" ;;
      elasticsearch_exporter) build_module "$out" "github.com/prometheus-community/elasticsearch_exporter@$version" ;;
      lab-cadvisor) build_lab_cadvisor "$out" ;;
    esac
  fi
  # Files of the upstream modules the harness needs beside the binaries.
  case $name in
    kwok) # KWOK's stages: nodes initialised and kept alive by leases, pods through the fast
      # lifecycle (with pod/general's, ECK's pod updates keep resetting the delays).
      [ -f "$(dirname "$out")/stages.yaml" ] || module_files "sigs.k8s.io/kwok@$version" "$(dirname "$out")/stages.yaml" \
        kustomize/stage/node/fast/node-initialize.yaml \
        kustomize/stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
        kustomize/stage/pod/fast/pod-ready.yaml kustomize/stage/pod/fast/pod-complete.yaml \
        kustomize/stage/pod/fast/pod-delete.yaml ;;
    eck-operator) # ECK's own webhook configuration, which the harness points at the operator, and
      # all its CRDs (the operator watches every kind it manages).
      [ -f "$(dirname "$out")/webhook.yaml" ] ||
        module_files "github.com/elastic/cloud-on-k8s/v3@$version" "$(dirname "$out")/webhook.yaml" config/webhook/manifests.yaml
      [ -f "$(dirname "$out")/crds/all-crds.yaml" ] || { mkdir -p "$(dirname "$out")/crds" &&
        module_files "github.com/elastic/cloud-on-k8s/v3@$version" "$(dirname "$out")/crds/all-crds.yaml" config/crds/v1/all-crds.yaml; } ;;
    spark-operator) # The chart's CRDs: the controller watches SparkConnects too.
      [ -f "$(dirname "$out")/crds/sparkconnects.yaml" ] || { mkdir -p "$(dirname "$out")/crds" &&
        for f in sparkapplications scheduledsparkapplications sparkconnects; do
          module_files "github.com/kubeflow/spark-operator/v2@$version" "$(dirname "$out")/crds/$f.yaml" \
            "charts/spark-operator-chart/crds/sparkoperator.k8s.io_$f.yaml"
        done; } ;;
    prometheus-operator) # Every monitoring.coreos.com CRD of the release (example/prometheus-operator-crd):
      # third_party/upstream-crds vendors only the three kinds Strata writes, and the lab needs the
      # Prometheus kind too; the operator watches the others it finds installed.
      [ -f "$(dirname "$out")/crds/monitoring.coreos.com_prometheuses.yaml" ] || { mkdir -p "$(dirname "$out")/crds" &&
        for f in alertmanagerconfigs alertmanagers podmonitors probes prometheusagents prometheuses prometheusrules scrapeconfigs servicemonitors thanosrulers; do
          module_files "github.com/prometheus-operator/prometheus-operator@$version" "$(dirname "$out")/crds/monitoring.coreos.com_$f.yaml" \
            "example/prometheus-operator-crd/monitoring.coreos.com_$f.yaml"
        done; } ;;
  esac
  echo "$out"
}

envtest_dir() {
  if [ -n "${KUBEBUILDER_ASSETS:-}" ]; then
    echo "$KUBEBUILDER_ASSETS"
    return
  fi
  local dir="$bin/k8s/$KUBERNETES_VERSION-etcd-$ETCD_VERSION" api etcd
  api=$(tool_path kube-apiserver)
  etcd=$(tool_path etcd)
  mkdir -p "$dir"
  ln -sf "$api" "$dir/kube-apiserver"
  ln -sf "$etcd" "$dir/etcd"
  echo "$dir"
}

case ${1:-} in
  path) tool_path "${2:?tool name}" ;;
  envtest) envtest_dir ;;
  upstream) for t in kube-apiserver etcd kube-scheduler kube-controller-manager kwok eck-operator spark-operator; do tool_path "$t" >/dev/null; done ;;
  all) for t in kube-apiserver etcd controller-gen crd-ref-docs helm prometheus promtool kafka_exporter elasticsearch_exporter lab-cadvisor prometheus-operator kube-scheduler kube-controller-manager kwok eck-operator spark-operator; do tool_path "$t" >/dev/null; done ;;
  *) sed -n '2,15p' "$0" >&2; exit 2 ;;
esac
