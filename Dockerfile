# syntax=docker/dockerfile:1
# The Strata operator's image: the manager (/manager, the entrypoint) and the strata CLI
# (/usr/local/bin/strata), static binaries on distroless's static nonroot base (no shell, no libc,
# user 65532). Build it with `make docker-build IMG=<image>` (needs a Docker engine with BuildKit).
#
# The Go build is hack/build.sh: the same script `make build` runs and dockerfile_test.go runs on a
# copy of the build context (.dockerignore applied), checking that the binaries are static. Change
# build flags there, not here.
ARG GO_VERSION=1.26

FROM --platform=$BUILDPLATFORM golang:${GO_VERSION} AS build
ARG TARGETOS=linux
ARG TARGETARCH
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    GOOS=$TARGETOS GOARCH=$TARGETARCH hack/build.sh /out

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/manager /manager
COPY --from=build /out/strata /usr/local/bin/strata
USER 65532:65532
ENTRYPOINT ["/manager"]
