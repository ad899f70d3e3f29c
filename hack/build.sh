#!/usr/bin/env bash
# Builds the manager and the strata CLI as static binaries into DIR. The one build line shared by
# `make build`, the Dockerfile (which runs this script) and the test that checks the image's
# binaries are static (dockerfile_test.go): change the flags here and all three follow.
#
#   hack/build.sh DIR      GOOS and GOARCH from the environment, as for `go build`
set -euo pipefail
out=${1:?usage: hack/build.sh DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$(dirname "${BASH_SOURCE[0]}")/.."
for cmd in manager strata; do
  CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o "$out/$cmd" "./cmd/$cmd"
done
