#!/usr/bin/env bash
# scripts/loadtest.sh: what `make loadtest` runs.
#
# Builds bin/gameserver and bin/loadtest, creates a player in a fresh temporary database, serves it on a
# free loopback port, and runs the gap scenario (static "/" against the dynamic HQ page of that player) at
# -c 12 for LOADTEST_SECONDS (default 5) each after a LOADTEST_WARMUP (default 1) second warm-up, first with
# a new connection per request (as the seed's ab runs), then with keep-alive (-k). Then it stops the server
# (SIGTERM, wait) and removes the temporary files, also on failure. Each gap run also writes an HTML report
# (loadtest -html) into LOADTEST_HTML (default bin/loadtest-report/): gap-new-connection.html, gap-keep-alive.html.
# LOADTEST_WORKERS (default 1) is the server's -workers (make loadtest-workers runs 1 and 2).
# Exit status: non-zero if anything fails, including any failed request or any non-2xx response.
# Needs nothing but Go and bash. Loopback only, bounded in time.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go} BIN=${BIN:-bin}
secs=${LOADTEST_SECONDS:-5} warmup=${LOADTEST_WARMUP:-1} concurrency=${LOADTEST_CONCURRENCY:-12} workers=${LOADTEST_WORKERS:-1}
html=${LOADTEST_HTML:-$BIN/loadtest-report}
mkdir -p "$html"

tmp=$(mktemp -d)
pid=
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    for _ in $(seq 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && { echo "loadtest: the server ignored SIGTERM for 15 s; killing it" >&2; kill -KILL "$pid"; }
    wait "$pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "loadtest: $*" >&2; [ -s "$tmp/server.log" ] && { echo "--- server log:" >&2; tail -20 "$tmp/server.log" >&2; }; exit 1; }

"$GO" build -o "$BIN/" ./cmd/gameserver ./cmd/loadtest

tid=$("$BIN/gameserver" -db "$tmp/ss.db" -new-player loadtester) || fail "gameserver -new-player failed"
[[ $tid =~ ^[0-9a-f]{32}$ ]] || fail "gameserver -new-player printed '$tid', not a 32-hex session id"

"$BIN/gameserver" -addr 127.0.0.1:0 -db "$tmp/ss.db" -tick 10m -workers "$workers" 2>"$tmp/server.log" &
pid=$!
addr=
for _ in $(seq 100); do # the slog line: msg=serving addr=127.0.0.1:PORT (text) or "msg":"serving",..."addr":"..." (JSON)
  addr=$(grep -E 'msg=("?)serving|"msg":"serving"' "$tmp/server.log" | grep -oE 'addr"?[=:]"?127\.0\.0\.1:[0-9]+' | grep -oE '127\.0\.0\.1:[0-9]+' | head -1 || true)
  [ -n "$addr" ] && break
  kill -0 "$pid" 2>/dev/null || fail "the server exited before serving"
  sleep 0.1
done
[ -n "$addr" ] || fail "no 'msg=serving addr=127.0.0.1:PORT' line from the server within 10 s"
echo "gameserver (pid $pid, -workers $workers) serving on $addr; player loadtester, tid $tid"

static="http://$addr/" dynamic="http://$addr/game?function=hq&tid=$tid"
for mode in "" -k; do
  what="a new connection per request" report=gap-new-connection.html
  [ -n "$mode" ] && what="keep-alive" report=gap-keep-alive.html
  echo
  echo "=== loadtest gap -c $concurrency ${mode:+$mode }-t $secs -warmup $warmup ($what)"
  # -n: lift ab's 50000-request cap of -t so both pages run the full duration.
  # shellcheck disable=SC2086
  "$BIN/loadtest" gap -c "$concurrency" $mode -t "$secs" -n 100000000 -warmup "$warmup" -html "$html/$report" \
    "$static" "$dynamic" | tee "$tmp/gap.txt"
  bad=$(awk '/^Failed requests:/ && $3 != 0 {n++} /^Non-2xx responses:/ {n++} END {print n+0}' "$tmp/gap.txt")
  [ "$bad" = 0 ] || fail "requests failed or were not 2xx ($what; see the reports above)"
done
kill -0 "$pid" 2>/dev/null || fail "the server died during the load test"
echo
echo "loadtest: no failed requests; HTML reports in $html/"
