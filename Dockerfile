# Multi-stage build of the sqlgate container Action: a release build, then a slim runtime.
FROM rust:1-slim-bookworm AS build
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY src src
COPY templates templates
COPY benches benches
RUN cargo build --release --locked --bin sqlgate

FROM debian:bookworm-slim
# GitHub-hosted runners own the mounted workspace as uid 1001; running as that uid (not root)
# lets the Action write its report into the workspace.
RUN useradd --uid 1001 --create-home --shell /usr/sbin/nologin sqlgate
COPY --from=build /src/target/release/sqlgate /usr/local/bin/sqlgate
USER 1001
ENTRYPOINT ["/usr/local/bin/sqlgate"]
