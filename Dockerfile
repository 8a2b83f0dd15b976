# syntax=docker/dockerfile:1
# The sqlgate container image (ghcr.io/OWNER/sqlgate), for `uses: docker://ghcr.io/OWNER/sqlgate@sha256:...`
# and `docker run`. The Action itself (action.yml) does not use it: it downloads the same binary.
#
# Default target `release`: the static musl binaries (without DuckDB: the `duckdb` feature links a
# glibc library; `dataset.engine.kind: duckdb` is refused, saying so; DuckDB ships in the release's
# x86_64-unknown-linux-gnu archive instead) that the release workflow built and checked,
# staged as dist/linux-amd64/sqlgate and dist/linux-arm64/sqlgate by .ci/package-release, so the
# image carries byte for byte the binary of the release archives. No Rust build happens here.
#   docker buildx build --platform linux/amd64,linux/arm64 .
# Target `source`: build from this checkout instead (local use only; a release build takes minutes).
#   docker build --target source -t sqlgate:dev .
#
# It runs as root: GitHub's documentation for Docker container actions asks for the default
# (root) user, since the runner mounts the workspace, $GITHUB_OUTPUT and the event file owned by
# the runner's user (self-hosted runners and `act` differ from the hosted uid 1001).

FROM rust:1-slim-bookworm AS build
# curl: the engine crate's build script downloads the prebuilt libduckdb (the `duckdb` feature,
# linux/amd64 only; other platforms build without DuckDB, docs/DEVELOPMENT.md "DuckDB").
RUN apt-get update \
    && apt-get install -y --no-install-recommends curl ca-certificates \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY .cargo .cargo
COPY src src
COPY crates crates
COPY templates templates
COPY benches benches
ARG TARGETARCH
# /out holds what goes to /usr/local/bin: the binary, and on amd64 the libduckdb.so it links
# (its rpath starts with $ORIGIN).
RUN if [ "${TARGETARCH:-amd64}" = amd64 ]; then \
        cargo build --release --locked --bin sqlgate \
        && mkdir -p /out && cp target/release/deps/libduckdb.so /out/; \
    else \
        cargo build --release --locked --bin sqlgate --no-default-features && mkdir -p /out; \
    fi \
    && cp target/release/sqlgate /out/

# git: sqlgate reads the trusted inputs of a pull_request run (config, template, baseline) with
# `git show <base sha>:<path>`. The workspace belongs to another uid than root, so git is told to
# trust it (the image runs nothing but sqlgate). ca-certificates: HTTPS to the GitHub API.
FROM debian:bookworm-slim AS runtime
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates git \
    && rm -rf /var/lib/apt/lists/* \
    && git config --system --add safe.directory '*'
ENTRYPOINT ["/usr/local/bin/sqlgate"]
CMD ["--help"]

FROM runtime AS source
COPY --from=build /out/ /usr/local/bin/
RUN ["/usr/local/bin/sqlgate", "--version"]

FROM runtime AS release
ARG TARGETARCH
COPY --chmod=0755 dist/linux-${TARGETARCH}/sqlgate /usr/local/bin/sqlgate
RUN ["/usr/local/bin/sqlgate", "--version"]
