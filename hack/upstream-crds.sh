#!/usr/bin/env bash
# Downloads the upstream CRDs Strata's tests install (Strimzi, the Spark operator, ECK, the
# Prometheus Operator) at the versions pinned in hack/versions.env, into bin/upstream-crds/ in the
# same layout as ../shared/upstream-crds. For users with the internet; the tests look for
# $STRATA_UPSTREAM_CRDS, then ../shared/upstream-crds, then this cache.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck disable=SC1091
source <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$root/hack/versions.env")
out=${1:-$root/bin/upstream-crds}
gh=https://raw.githubusercontent.com

fetch() { # fetch FOLDER URL
  mkdir -p "$out/$1"
  echo "downloading $2"
  curl -fsSL --retry 3 -o "$out/$1/$(basename "$2").tmp" "$2"
  mv "$out/$1/$(basename "$2").tmp" "$out/$1/$(basename "$2")"
}

s="strimzi-$STRIMZI_VERSION"
for f in 040-Crd-kafka 043-Crd-kafkatopic 045-Crd-kafkanodepool 049-Crd-kafkarebalance; do
  fetch "$s" "$gh/strimzi/strimzi-kafka-operator/$STRIMZI_VERSION/packaging/install/cluster-operator/$f.yaml"
done
s="spark-operator-v$SPARK_OPERATOR_VERSION"
for f in sparkapplications scheduledsparkapplications; do
  fetch "$s" "$gh/kubeflow/spark-operator/v$SPARK_OPERATOR_VERSION/charts/spark-operator-chart/crds/sparkoperator.k8s.io_$f.yaml"
done
s="eck-v$ECK_VERSION"
for f in elasticsearch.k8s.elastic.co_elasticsearches autoscaling.k8s.elastic.co_elasticsearchautoscalers; do
  fetch "$s" "$gh/elastic/cloud-on-k8s/v$ECK_VERSION/config/crds/v1/resources/$f.yaml"
done
s="prometheus-operator-v$PROMETHEUS_OPERATOR_VERSION"
for f in servicemonitors podmonitors prometheusrules; do
  fetch "$s" "$gh/prometheus-operator/prometheus-operator/v$PROMETHEUS_OPERATOR_VERSION/example/prometheus-operator-crd/monitoring.coreos.com_$f.yaml"
done
echo "upstream CRDs in $out"
