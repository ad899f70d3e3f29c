#!/usr/bin/env bash
# Refreshes third_party/upstream-crds: the CRDs of the projects Strata drives (Strimzi, the Spark
# operator, ECK, the Prometheus Operator) at the versions pinned in hack/versions.env, which the
# tests and `make run` install into every control plane. Run it after changing one of those
# versions, and commit the result.
#
#   hack/upstream-crds.sh             download the release files (needs the internet)
#   hack/upstream-crds.sh --from DIR  copy DIR, a directory of the same layout
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck disable=SC1091
source <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$root/hack/versions.env")
out=$root/third_party/upstream-crds
gh=https://raw.githubusercontent.com

strimzi="strimzi-$STRIMZI_VERSION"
spark="spark-operator-v$SPARK_OPERATOR_VERSION"
eck="eck-v$ECK_VERSION"
promop="prometheus-operator-v$PROMETHEUS_OPERATOR_VERSION"

if [ "${1:-}" = --from ]; then
  src=${2:?usage: hack/upstream-crds.sh --from DIR}
  for d in "$strimzi" "$spark" "$eck" "$promop"; do
    [ -d "$src/$d" ] || { echo "$src/$d: missing (the versions in hack/versions.env name it)" >&2; exit 1; }
    rm -rf "${out:?}/$d"
    cp -r "$src/$d" "$out/$d"
  done
  echo "upstream CRDs copied from $src into $out"
  exit 0
fi

fetch() { # fetch FOLDER URL
  mkdir -p "$out/$1"
  echo "downloading $2"
  curl -fsSL --retry 3 -o "$out/$1/$(basename "$2").tmp" "$2"
  mv "$out/$1/$(basename "$2").tmp" "$out/$1/$(basename "$2")"
}

for f in 040-Crd-kafka 043-Crd-kafkatopic 044-Crd-kafkauser 045-Crd-kafkanodepool 049-Crd-kafkarebalance; do
  fetch "$strimzi" "$gh/strimzi/strimzi-kafka-operator/$STRIMZI_VERSION/packaging/install/cluster-operator/$f.yaml"
done
for f in sparkapplications scheduledsparkapplications; do
  fetch "$spark" "$gh/kubeflow/spark-operator/v$SPARK_OPERATOR_VERSION/charts/spark-operator-chart/crds/sparkoperator.k8s.io_$f.yaml"
done
for f in elasticsearch.k8s.elastic.co_elasticsearches autoscaling.k8s.elastic.co_elasticsearchautoscalers; do
  fetch "$eck" "$gh/elastic/cloud-on-k8s/v$ECK_VERSION/config/crds/v1/resources/$f.yaml"
done
for f in servicemonitors podmonitors prometheusrules; do
  fetch "$promop" "$gh/prometheus-operator/prometheus-operator/v$PROMETHEUS_OPERATOR_VERSION/example/prometheus-operator-crd/monitoring.coreos.com_$f.yaml"
done
# Folders of versions no longer pinned go, so the tests install only what is pinned.
for d in "$out"/*/; do
  case $(basename "$d") in "$strimzi" | "$spark" | "$eck" | "$promop") ;; *) rm -rf "$d" ;; esac
done
echo "upstream CRDs in $out; commit them"
