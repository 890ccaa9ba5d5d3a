#!/bin/bash
# How long omega serve takes to answer /readyz 200 on PostgreSQL.
#   scripts/ready.sh together N   N processes started at once on a fresh database: each one's time
#   scripts/ready.sh join         a process joining one that serves 200 senders (needs the scale
#                                 kit's load generator: LG=/tmp/omega-scale/loadgen-bin)
#   scripts/ready.sh locked       a process joining a set-up database while another session holds
#                                 the read models' schema lock (a process setting up elsewhere)
# OM is the omega binary (default: built here), PGADMIN a psql URL of the server (default: local
# PostgreSQL 15, user root); ports 18700-18790 are used. Stops only what it started.
set -u
OM=${OM:-}; LG=${LG:-/tmp/omega-scale/loadgen-bin}
PGADMIN=${PGADMIN:-postgres://root@127.0.0.1:5432/test}
PGBASE=${PGADMIN%/*}
W=$(mktemp -d)
if [ -z "$OM" ]; then OM=$W/omega; CGO_ENABLED=0 go build -tags stdjson -o "$OM" ./cmd/omega || exit 1; fi
psql -q "$PGADMIN" -c "DROP DATABASE IF EXISTS omega_ready WITH (FORCE)" -c "CREATE DATABASE omega_ready" 2>/dev/null
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$W"' EXIT
serve() { # name port
	mkdir -p "$W/$1"
	env -i PATH=/usr/bin:/bin HOME="$W/$1" OMEGA_DATA_DIR="$W/$1" OMEGA_DATABASE_URL="$PGBASE/omega_ready?sslmode=disable" \
		OMEGA_HTTP_ADDR=127.0.0.1:$2 OMEGA_API_TOKEN=tok OMEGA_PROVIDER=openai OMEGA_OPENAI_BASE_URL=http://127.0.0.1:18780/v1 \
		OMEGA_OPENAI_API_KEY=x OMEGA_MODEL_FAST=pong OMEGA_MODEL_COMPLEX=pong OMEGA_LOG_LEVEL=warn "$OM" serve >"$W/$1.log" 2>&1 &
	PIDS+=($!)
}
ready() { until curl -sf -o /dev/null "http://127.0.0.1:$1/readyz"; do sleep 0.02; done; }
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
case "${1:-}" in
together)
	t0=$(date +%s%N)
	for i in $(seq 1 "${2:-4}"); do serve "p$i" $((18710 + i)); done
	for i in $(seq 1 "${2:-4}"); do ready $((18710 + i)); echo "p$i ready after $(ms "$t0") ms"; done ;;
join)
	"$LG" fake -addr 127.0.0.1:18780 >"$W/fake.log" 2>&1 & PIDS+=($!)
	serve a 18701; ready 18701
	"$LG" drive -ports 18701 -token tok -senders 200 -messages 100000 -duration 20s -run j >"$W/drive.json" 2>&1 & PIDS+=($!)
	sleep 8
	t0=$(date +%s%N); serve b 18702; ready 18702
	echo "joining process ready after $(ms "$t0") ms" ;;
locked)
	serve a 18701; ready 18701
	psql -q "$PGBASE/omega_ready" -c "SELECT pg_advisory_lock($((0x6f6d6567612d70)))" -c "SELECT pg_sleep(15)" >/dev/null 2>&1 &
	PIDS+=($!)
	sleep 0.5
	t0=$(date +%s%N); serve b 18702; ready 18702
	echo "process joining while the schema lock is held ready after $(ms "$t0") ms" ;;
*) echo "usage: $0 together N | join | locked" >&2; exit 2 ;;
esac
