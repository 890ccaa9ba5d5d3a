FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -o /out/omega ./cmd/omega

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates tzdata && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/omega /usr/local/bin/omega
ENV OMEGA_DATA_DIR=/data
VOLUME /data
ENTRYPOINT ["omega"]
CMD ["serve"]
