#!/bin/bash
# bench.sh BIN SHARED nginx|idle|streams
#
# Runs one of the reference benchmarks of SHARED/bench/README.md against the
# file server BIN, on a free loopback port, serving SHARED/bench/www:
#   nginx  SHARED/bench/vs-nginx.sh: CPU per request and req/s vs nginx, keep-alive and not
#   idle   SHARED/bench/idleconns: resident memory per idle keep-alive connection (10,000)
#   streams  cmd/fileserver/streamclients: resident memory per open event stream (10,000),
#            and the time one broadcast takes to reach them all
# The server is stopped on every exit path; each step is bounded in time.
set -euo pipefail
bin=${1:?usage: bench.sh BIN SHARED nginx|idle|streams} shared=${2:?usage: bench.sh BIN SHARED nginx|idle|streams} what=${3:?usage: bench.sh BIN SHARED nginx|idle|streams}
[ -d "$shared/bench/www" ] || {
  echo "bench: $shared/bench/www not found: the reference benchmarks live in the workplace's shared/ folder; run make with SHARED=/path/to/shared" >&2
  exit 2
}
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
case $what in idle | streams) ulimit -n 20000 ;; esac
events=()
[ "$what" = streams ] && events=(-events /events)
"$bin" -addr 127.0.0.1:0 -root "$shared/bench/www" "${events[@]}" 2>"$tmp/log" &
pid=$!
addr=
for _ in $(seq 50); do
  addr=$(sed -n 's/.*msg=serving addr=\([0-9.:]*\).*/\1/p; s/.* INFO serving addr=\([0-9.:]*\).*/\1/p' "$tmp/log")
  [ -n "$addr" ] && break
  sleep 0.1
done
[ -n "$addr" ] || { echo "bench: the file server did not start:" >&2; cat "$tmp/log" >&2; exit 1; }
case $what in
nginx)
  timeout 600 "$shared/bench/vs-nginx.sh" "http://$addr/index.html" "$pid" ;;
idle)
  # shared/ is read-only: run idleconns from a copy.
  cp -r "$shared/bench/idleconns" "$tmp/idleconns"
  (cd "$tmp/idleconns" && timeout 300 go run . -addr "$addr" -path /index.html -n 10000 -pid "$pid") ;;
streams)
  go build -o "$tmp/streamclients" ./cmd/fileserver/streamclients
  timeout 300 "$tmp/streamclients" -addr "$addr" -path /events -n 10000 -pid "$pid"
  sed -n 's/.*msg=broadcast /server: broadcast /p' "$tmp/log" ;;
*)
  echo "bench: unknown benchmark $what (nginx, idle or streams)" >&2; exit 2 ;;
esac
