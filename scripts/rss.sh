#!/usr/bin/env bash
# Memory and cold start of `omega serve` (docs/BENCHMARKS.md, issue 12).
#
# Builds omega (or uses $OMEGA_BIN), runs `omega serve` on SQLite in a
# temporary data directory with the HTTP channel and a Claude Code double
# that answers at once, and prints:
#   - cold start: from exec to the first reply of a ?wait= post (empty data dir),
#   - idle RSS: VmRSS/RssAnon/RssFile once the process has settled,
#   - peak RSS while SENDERS senders each post MESSAGES messages one after
#     the other with ?wait=60s, sampled every 200 ms.
# Offline; needs bash, curl and a Go toolchain (unless OMEGA_BIN is set).
#
#   scripts/rss.sh                 # build, then measure
#   OMEGA_BIN=/tmp/omega scripts/rss.sh
#   SENDERS=50 MESSAGES=10 SETTLE=5 scripts/rss.sh
set -euo pipefail

SENDERS=${SENDERS:-50}
MESSAGES=${MESSAGES:-10}
SETTLE=${SETTLE:-5}          # seconds after the first reply before the idle sample
PORT=${PORT:-18181}
ADDR=127.0.0.1:$PORT
URL=http://$ADDR

tmp=$(mktemp -d)
pid=
sampler=
cleanup() {
	[[ -n $sampler ]] && kill "$sampler" 2>/dev/null || true
	if [[ -n $pid ]]; then
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

bin=${OMEGA_BIN:-}
if [[ -z $bin ]]; then
	bin=$tmp/omega
	(cd "$(dirname "$0")/.." && CGO_ENABLED=0 go build -tags stdjson -o "$bin" ./cmd/omega) # as make build
fi

cat >"$tmp/claude" <<'CLAUDE'
#!/bin/sh
printf '{"type":"result","subtype":"success","is_error":false,"result":"ok","session_id":"s1","num_turns":1}\n'
CLAUDE
chmod +x "$tmp/claude"
mkdir -p "$tmp/data"

# kib FIELD: a field of /proc/$pid/status in KiB.
kib() { awk -v f="$1:" '$1 == f { print $2 }' "/proc/$pid/status"; }
mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
now_ms() { date +%s%3N; }

post() { # post SENDER TEXT: one message, waiting for the reply; prints the HTTP status
	curl -s -o /dev/null -w '%{http_code}' -m 90 -H 'Content-Type: application/json' \
		-d "{\"sender_id\":\"$1\",\"text\":\"$2\"}" "$URL/api/messages?wait=60s"
}

start=$(now_ms)
OMEGA_DATA_DIR=$tmp/data OMEGA_HTTP_ADDR=$ADDR OMEGA_CLAUDE_BIN=$tmp/claude OMEGA_CLASSIFY=false \
	OMEGA_LOG_LEVEL=warn "$bin" serve >"$tmp/serve.log" 2>&1 &
pid=$!

# Cold start: post until the first reply (the port is not open at once).
code=000
for _ in $(seq 1 600); do
	code=$(post cold hello 2>/dev/null || true)
	[[ $code == 200 ]] && break
	kill -0 "$pid" 2>/dev/null || { cat "$tmp/serve.log"; echo "omega exited" >&2; exit 1; }
	sleep 0.01
done
[[ $code == 200 ]] || { cat "$tmp/serve.log"; echo "no reply (HTTP $code)" >&2; exit 1; }
echo "cold start to first reply: $(($(now_ms) - start)) ms"

sleep "$SETTLE"
echo "idle: VmRSS $(mib "$(kib VmRSS)") MiB (RssAnon $(mib "$(kib RssAnon)"), RssFile $(mib "$(kib RssFile)")), threads $(kib Threads)"

# Sampler: the largest VmRSS (and the anon/file parts at that moment) seen.
(
	peak=0 anon=0 file=0
	trap 'echo "$peak $anon $file" >"$tmp/peak"; exit 0' TERM
	while :; do
		read -r v a f < <(awk '$1=="VmRSS:"{v=$2} $1=="RssAnon:"{a=$2} $1=="RssFile:"{f=$2} END{print v, a, f}' "/proc/$pid/status")
		if ((v > peak)); then peak=$v anon=$a file=$f; fi
		sleep 0.2 & wait $!
	done
) &
sampler=$!

t0=$(now_ms)
for s in $(seq 1 "$SENDERS"); do
	(
		for m in $(seq 1 "$MESSAGES"); do
			c=$(post "s$s" "message $m")
			[[ $c == 200 ]] || echo "sender s$s message $m: HTTP $c" >&2
		done
	) &
done
for job in $(jobs -p); do
	[[ $job == "$pid" || $job == "$sampler" ]] || wait "$job"
done
t1=$(now_ms)
kill -TERM "$sampler"
wait "$sampler" 2>/dev/null || true
sampler=
read -r peak anon file <"$tmp/peak"
echo "load: $((SENDERS * MESSAGES)) turns in $((t1 - t0)) ms"
echo "peak: VmRSS $(mib "$peak") MiB (RssAnon $(mib "$anon"), RssFile $(mib "$file"))"
echo "after: VmRSS $(mib "$(kib VmRSS)") MiB (RssAnon $(mib "$(kib RssAnon)"), RssFile $(mib "$(kib RssFile)"))"
