# syntax=docker/dockerfile:1
# The Strata operator's image: the manager (/manager, the entrypoint) and the strata CLI
# (/usr/local/bin/strata), static binaries on distroless's static nonroot base (no shell, no libc,
# user 65532). Build it with `make docker-build IMG=<image>` (needs a Docker engine with BuildKit).
#
# The Go build is hack/build.sh: the same script `make build` runs and dockerfile_test.go runs on a
# copy of the build context (.dockerignore applied), checking that the binaries are static. Change
# build flags there, not here.
ARG GO_VERSION=1.26
# Base images pinned by digest (a tag can move under a rebuild). These digests could not be read
# from the registries here (no network): they are the golang:1.26 and
# distroless/static-debian12:nonroot digests several public Dockerfiles pin. Refresh both with
# `docker buildx imagetools inspect golang:1.26` and `... gcr.io/distroless/static-debian12:nonroot`.
ARG GO_DIGEST=sha256:595c7847cff97c9a9e76f015083c481d26078f961c9c8dca3923132f51fe12f1
ARG BASE_DIGEST=sha256:d093aa3e30dbadd3efe1310db061a14da60299baff8450a17fe0ccc514a16639

FROM --platform=$BUILDPLATFORM golang:${GO_VERSION}@${GO_DIGEST} AS build
ARG TARGETOS=linux
ARG TARGETARCH
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    GOOS=$TARGETOS GOARCH=$TARGETARCH hack/build.sh /out

FROM gcr.io/distroless/static-debian12:nonroot@${BASE_DIGEST}
COPY --from=build /out/manager /manager
COPY --from=build /out/strata /usr/local/bin/strata
USER 65532:65532
ENTRYPOINT ["/manager"]
