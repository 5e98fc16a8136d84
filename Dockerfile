# Stowage's container image: a drop-in for the Azurite image in
# docker-compose files and testcontainers (docs/operations.md#container-image).
#
#   docker build -t stowage .
#   docker run -p 10000:10000 -v stowage:/data stowage
#
# The binary answers to `stowage-server`, `azurite` and `azurite-blob`, so
# the commands written for the Azurite image (`azurite-blob --blobHost
# 0.0.0.0`, `azurite --blobHost 0.0.0.0 --queueHost 0.0.0.0 ...`) start it.
# Data goes to /data/stowage-data (the working directory is the volume).

FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p stowage-server \
    && mkdir -p /out/bin /out/data \
    && cp target/release/stowage-server /out/bin/stowage-server \
    && ln -s stowage-server /out/bin/azurite \
    && ln -s stowage-server /out/bin/azurite-blob

# glibc, libgcc and CA certificates, no shell, user 65532 (nonroot).
FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /out/bin/ /usr/local/bin/
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
WORKDIR /data
VOLUME ["/data"]
EXPOSE 10000
HEALTHCHECK --interval=10s --timeout=5s --start-period=10s --retries=3 \
    CMD ["stowage-server", "healthcheck", "--blobPort", "10000"]
CMD ["stowage-server", "--blobHost", "0.0.0.0", "--blobPort", "10000"]
