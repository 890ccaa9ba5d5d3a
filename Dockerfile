FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# -tags stdjson: see the Makefile.
RUN CGO_ENABLED=0 go build -trimpath -tags stdjson -o /out/omega ./cmd/omega

# The runtime carries Node and Claude Code (the default provider) from the
# npm registry. Claude Code refuses full permissions as root, and the model's
# tools should not run as root anyway: omega runs as the user "omega".
FROM node:22-bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates tzdata git \
 && rm -rf /var/lib/apt/lists/*
ARG CLAUDE_CODE_VERSION=latest
RUN npm install -g "@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}" && npm cache clean --force
COPY --from=build /out/omega /usr/local/bin/omega
# /data: omega's data (SQLite store, workspace, generated API token).
# /claude: Claude Code's login and settings (CLAUDE_CONFIG_DIR), so a login
# survives a rebuild. Both are created owned by omega, so fresh named
# volumes are too.
RUN useradd --create-home --uid 10001 omega \
 && mkdir -p /data /claude \
 && chown omega:omega /data /claude
ENV OMEGA_DATA_DIR=/data \
    CLAUDE_CONFIG_DIR=/claude
USER omega
WORKDIR /home/omega
VOLUME ["/data", "/claude"]
ENTRYPOINT ["omega"]
CMD ["serve"]
