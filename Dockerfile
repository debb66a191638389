# billsync: syncer (default), report and sandbox in one small image.
# Build: docker build -t billsync .
# Run:   docker run -d -v billsync-data:/data -v /etc/billsync/key:/run/secrets/billsync-key:ro \
#          -e BILLSYNC_API_KEY_FILE=/run/secrets/billsync-key -e BILLSYNC_BASE_URL=... billsync
# The build copies the sources alone, and .dockerignore keeps warehouses, reports, keys and .git
# out of the build context too: an image is built where the data lives (docs/docker_test.go).
FROM golang:1.26-bookworm AS build
WORKDIR /src
# The DuckDB driver is cgo with a prebuilt static library; g++ comes with the golang image.
ENV CGO_ENABLED=1
COPY go.mod go.sum ./
RUN go mod download
COPY cmd ./cmd
COPY internal ./internal
COPY queries ./queries
COPY reports ./reports
RUN go build -trimpath -ldflags="-s -w" -o /out/ ./cmd/syncer ./cmd/report ./cmd/sandbox

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates tzdata libstdc++6 \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --home-dir /var/lib/billsync --create-home billsync \
 && mkdir -p /data && chown billsync:billsync /data
COPY --from=build /out/ /usr/local/bin/
USER billsync
# DuckDB resolves its extension directory from HOME; the warehouse and the reports live on the
# volume, every report written after each successful sync.
ENV HOME=/var/lib/billsync \
    BILLSYNC_DB=/data/billsync.duckdb \
    BILLSYNC_REPORTS=all \
    BILLSYNC_REPORTS_OUT=/data/out \
    BILLSYNC_LOG_FORMAT=json
WORKDIR /data
VOLUME ["/data"]
ENTRYPOINT ["syncer"]
