#!/usr/bin/env bash
# scripts/capacity.sh: what `make capacity` runs: how many players one server holds (docs/capacity.md).
#
# For each engine, nethttp (GOMAXPROCS=1, net/http under one lock) and then the loop as deployed, on a fresh game
# whose tick is CAPACITY_TICK (10s, so that ticks fan out during the run): seeds the game with players and a
# session each (bin/players -prepare), starts bin/gameserver on loopback with its metrics, and ramps virtual
# players (game/bots: one live stream each, a page every 20 s and an order every 60 s on average) from 0 to
# CAPACITY_LOOP_MAX (8000, loop) or CAPACITY_NETHTTP_MAX (4000, nethttp) over CAPACITY_OVER (150s) until a service
# level breaks in two CAPACITY_WINDOW (5s) windows in a row: page p99 <= 50 ms, order p99 <= 100 ms, event delivery p99 <= 1 s,
# no errors (players connect from 127.0.0.2 to .251: the server keeps one address to 64 streams).
# Prints each run's report, then the capacity lines, the loop's last:
#   capacity: N players (engine loop, R req/s, E events/s, loop U%, longest turn T ms, server CPU C cores (P a request),
#   then ...; first to reach its limit: the server|the load generator|the machine)
# each after sentences on what N counts and the window's figures apart from the whole run's (docs/capacity.md).
# Ports: free ones by default; with CAPACITY_PORT_BASE=N (make capacity PORT_BASE=N) the server listens on
# 127.0.0.1:N and its metrics on N+1, one server at a time.
# The output opens and ends with make loadtest's machine line (loadtest explain machine: a verdict, quiet, busy or
# saturated, from a 2 s probe of a loop server alone). Pinning (scripts/pin.sh): on 2 or more cores the server runs on CPU 0 and bin/players on the others; CAPACITY_CPU
# (make capacity CPU=...) changes it: off, or the server's CPU list, or SERVER:PLAYERS (CPU=1:0).
# HTML reports (the ramp's charts) and JSON under CAPACITY_OUT (bin/capacity/). Loopback only, bounded in time (a
# few minutes at most on 2 cores: each ramp stops where a service level breaks); the servers are stopped (SIGTERM)
# and their files removed, also on failure.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go} BIN=${BIN:-bin}
tick=${CAPACITY_TICK:-10s} over=${CAPACITY_OVER:-150s} window=${CAPACITY_WINDOW:-5s}
# hold: the run ends this long after the ramp tops out if no service level broke (the players never stop by
# themselves); the capacity line then says the capacity is higher than the ramp.
hold=${CAPACITY_HOLD:-10s}
# The tops are above what each engine holds here (the loop 4,000 at most, nethttp 2,000, in the runs of
# docs/capacity.md), so that a ramp ends where a service level breaks, not at its top.
loopmax=${CAPACITY_LOOP_MAX:-8000} nethttpmax=${CAPACITY_NETHTTP_MAX:-4000}
# Both engines play the same world, as large as the larger ramp: a tick costs the loop about 12 us a player in the
# world (100 ms at 8,000 here), and a smaller world for one engine would make its ticks cheaper than the other's.
world=$(( loopmax > nethttpmax ? loopmax : nethttpmax ))
out=${CAPACITY_OUT:-$BIN/capacity}
portbase=${CAPACITY_PORT_BASE:-}
[[ -z $portbase || $portbase =~ ^[1-9][0-9]{2,4}$ && $portbase -le 65500 ]] ||
  { echo "capacity: CAPACITY_PORT_BASE must be a port from 100 to 65500, not '$portbase'" >&2; exit 2; }
addr=127.0.0.1:0 maddr=127.0.0.1:0
[ -n "$portbase" ] && addr=127.0.0.1:$portbase maddr=127.0.0.1:$((portbase + 1))
. scripts/pin.sh
pin_parse CPU "${CAPACITY_CPU:-}" "$(nproc)" || exit 2
slo=(-stop-when 'page.p99<=50ms' -stop-when 'order.p99<=100ms' -stop-when 'delivery.p99<=1s' -stop-when 'errors==0')
mkdir -p "$out"
rm -f "$out"/*.html "$out"/*.json
$GO build -buildvcs=auto -o "$BIN/" ./cmd/gameserver ./cmd/players ./cmd/loadtest

tmp=$(mktemp -d)
pid=
stop_server() {
  [ -n "$pid" ] || return 0
  kill -0 "$pid" 2>/dev/null && kill -TERM "$pid"
  for _ in $(seq 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$pid" 2>/dev/null && { echo "capacity: the server ignored SIGTERM for 15 s; killing it" >&2; kill -KILL "$pid"; }
  wait "$pid" 2>/dev/null || true
  pid=
}
trap 'stop_server; rm -rf "$tmp"' EXIT
fail() { echo "capacity: $*" >&2; [ -f "$tmp/server.log" ] && tail -5 "$tmp/server.log" >&2; exit 1; }
srv= mtr=

# serve LABEL DB [ENV...] -- [FLAGS...]: starts bin/gameserver on DB (loopback, metrics, pinned), waits until it serves;
# sets pid, srv (its address) and mtr (its metrics').
serve() {
  local label=$1 db=$2 envs=()
  shift 2
  while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  rm -f "$tmp/server.log"
  env ${envs[@]+"${envs[@]}"} ${pin_server:+taskset -c "$pin_server"} "$BIN/gameserver" -addr "$addr" -metrics-addr "$maddr" \
    -db "$db" -max-players 0 "$@" 2>"$tmp/server.log" &
  pid=$! srv=
  for _ in $(seq 150); do
    srv=$(grep -E 'msg=("?)serving' "$tmp/server.log" | grep -oE '127\.0\.0\.1:[0-9]+' | head -1 || true)
    [ -n "$srv" ] && break
    kill -0 "$pid" 2>/dev/null || fail "the $label server exited before serving"
    sleep 0.1
  done
  [ -n "$srv" ] || fail "no 'msg=serving addr=127.0.0.1:PORT' line from the $label server within 15 s"
  mtr=$(grep -E 'msg=("?)metrics' "$tmp/server.log" | grep -oE '127\.0\.0\.1:[0-9]+' | head -1 || true)
}

# measure ENGINE MAX LABEL [ENV...]: one ramp against a fresh server; appends the capacity line to $tmp/lines.
measure() {
  local engine=$1 maxp=$2 label=$3
  shift 3
  rm -f "$tmp"/game.db*
  "$BIN/players" -prepare "$world" -db "$tmp/game.db" >"$tmp/tids"
  serve "$label" "$tmp/game.db" "$@" -- -engine "$engine" -tick "$tick"
  echo "=== $label: ramp 0 to $maxp players over $over (tick $tick), server $srv"
  ${pin_client:+taskset -c "$pin_client"} "$BIN/players" -tids "$tmp/tids" -local-addrs 250 -ramp "0:$maxp" -over "$over" -window "$window" -hold "$hold" -stop-after 2 -label "$label" \
    -metrics "http://$mtr/metrics" "${slo[@]}" -html "$out/$engine.html" -json-out "$out/$engine.json" \
    "http://$srv" | tee "$tmp/run.txt"
  tail -1 "$tmp/run.txt" >>"$tmp/lines"
  stop_server
  echo
}

# machine WHEN: make loadtest's machine line (loadtest explain machine: cores, kernel, Go, load average and a verdict,
# quiet, busy or saturated), judged from a light probe of a loop server with nothing else running (/ at 200 req/s on
# one connection for 2 s, open loop), at the start and at the end of the runs.
machine() {
  rm -f "$tmp"/probe.db*
  "$BIN/players" -prepare 1 -db "$tmp/probe.db" >/dev/null
  serve probe "$tmp/probe.db" -- -engine loop
  ${pin_client:+taskset -c "$pin_client"} "$BIN/loadtest" -c 1 -k -rate 200 -t 2 -warmup 0.3 -metrics "http://$mtr/metrics" \
    -json-out "$tmp/machine.json" "http://$srv/" >/dev/null || fail "the machine's probe failed"
  stop_server
  echo "$("$BIN/loadtest" explain machine "$tmp/machine.json") ($1)"
}

: >"$tmp/lines"
machine 'at the start'
echo "pinning: $pin_note"
measure nethttp "$nethttpmax" "nethttp GOMAXPROCS=1" GOMAXPROCS=1
measure loop "$loopmax" loop
machine 'at the end'
echo "HTML reports: $out/nethttp.html $out/loop.html (JSON beside them); $(nproc) cores, $(date -u +%F)"
n=$(sed -nE 's/^capacity: ([0-9]+) players.*/\1/p' "$tmp/lines" | tr '\n' ' ')
read -r nn ln <<<"$n"
# A ramp that held to its top gives a lower bound, not a capacity: say which ratio that leaves.
held() { sed -n "$1p" "$tmp/lines" | grep -q 'held to the end of the ramp'; }
if [ -n "${nn:-}" ] && [ -n "${ln:-}" ] && [ "$nn" -gt 0 ]; then
  ratio=$(awk -v a="$ln" -v b="$nn" 'BEGIN { printf "%.2f", a / b }')
  if held 1; then
    echo "loop / nethttp: not measured: nethttp held to the top of its ramp (raise CAPACITY_NETHTTP_MAX)"
  elif held 2; then
    echo "loop / nethttp: at least ${ratio}x the players (the loop held to the top of its ramp: raise CAPACITY_LOOP_MAX)"
  else
    echo "loop / nethttp: ${ratio}x the players"
  fi
fi
cat "$tmp/lines"
