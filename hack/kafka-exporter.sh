#!/usr/bin/env bash
# Refreshes third_party/kafka_exporter: the source (gofmt-formatted, otherwise unmodified) of the Kafka exporter Strimzi deploys for a
# Kafka with spec.kafkaExporter (github.com/danielqsj/kafka_exporter, at the version
# hack/versions.env pins), which the lab builds and runs. It is vendored because the Go module
# proxy does not serve that module (it answers 403); its dependencies come from the proxy.
# Run it after changing KAFKA_EXPORTER_VERSION, and commit the result.
#
#   hack/kafka-exporter.sh             download the release's source (needs the internet)
#   hack/kafka-exporter.sh --from DIR  copy from DIR, a git clone of the exporter
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck disable=SC1091
source <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$root/hack/versions.env")
out=$root/third_party/kafka_exporter
files=(go.mod go.sum kafka_exporter.go scram_client.go LICENSE)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ "${1:-}" = --from ]; then
  src=${2:?usage: hack/kafka-exporter.sh --from DIR}
  for f in "${files[@]}"; do git -C "$src" show "$KAFKA_EXPORTER_VERSION:$f" >"$tmp/$f"; done
else
  curl -fsSL "https://github.com/danielqsj/kafka_exporter/archive/refs/tags/$KAFKA_EXPORTER_VERSION.tar.gz" |
    tar -xz -C "$tmp" --strip-components=1
fi
rm -rf "$out"
mkdir -p "$out"
for f in "${files[@]}"; do cp "$tmp/$f" "$out/$f"; done
# The release's source has stray whitespace gofmt removes: formatted, it passes the tree's gofmt
# check like every other Go file (the code is unchanged).
gofmt -w "$out"/*.go
echo "$KAFKA_EXPORTER_VERSION" >"$out/VERSION"
echo "kafka_exporter $KAFKA_EXPORTER_VERSION copied into $out"
