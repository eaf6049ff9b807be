#!/bin/bash
# vs-wrk.sh [ROUNDS] [SECONDS]
#
# Checks that our load generator is not the bottleneck: starts nginx with one worker serving a
# 2159-byte page (the nginx seed's size) on a free loopback port, then alternates, in one run,
#   wrk -t1 -c12 -dSECONDSs URL                 (one thread, keep-alive)
#   loadtest -k -c 12 -t SECONDS URL            (ours, keep-alive, same concurrency and time)
# ROUNDS times each (default 5, SECONDS 5 each) and prints each round, the medians and ours/wrk: first the
# client's CPU time per request (user+system, from bash's time; goal: <= 1, at or below wrk's), as the ratio of
# the medians and the median of each round's ratio (wrk and ours run back to back, so a round's ratio cancels
# slow drifts of the machine), which depends little on what else the machine runs, then requests per second
# (goal: >= 0.95), which on a shared 2-core machine swings by 2x from round to round.
# Set LOADTEST_FLAGS to pass more flags to ours, GOMAXPROCS to try other settings.
# Needs: go, nginx, wrk, bc (Debian: apt-get install -y nginx-light wrk bc). Loopback only, bounded in time.
set -euo pipefail
rounds=${1:-5} secs=${2:-5}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
for tool in go nginx wrk bc; do
  command -v "$tool" >/dev/null || { echo "vs-wrk: $tool is not installed (apt-get install -y nginx-light wrk bc)" >&2; exit 2; }
done
tmp=$(mktemp -d)
trap '[ -f "$tmp/nginx.pid" ] && kill "$(cat "$tmp/nginx.pid")" 2>/dev/null; rm -rf "$tmp"' EXIT
(cd "$root" && go build -o "$tmp/loadtest" ./cmd/loadtest)
mkdir "$tmp/www"
head -c 2159 /dev/zero | tr '\0' 'x' >"$tmp/www/index.html"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null || echo 18381)
cat >"$tmp/nginx.conf" <<CONF
worker_processes 1;
pid $tmp/nginx.pid;
error_log $tmp/error.log;
events { worker_connections 16384; use epoll; }
http {
  access_log off;
  sendfile on; tcp_nopush on; tcp_nodelay on;
  keepalive_requests 1000000;
  open_file_cache max=1000 inactive=60s; open_file_cache_valid 3600s;
  types { text/html html; }
  client_body_temp_path $tmp; proxy_temp_path $tmp; fastcgi_temp_path $tmp; uwsgi_temp_path $tmp; scgi_temp_path $tmp;
  server { listen 127.0.0.1:$port reuseport backlog=4096; root $tmp/www; }
}
CONF
nginx -c "$tmp/nginx.conf" -e "$tmp/error.log"
sleep 0.5
url=http://127.0.0.1:$port/index.html
median() { sort -g | awk '{a[NR]=$1} END{print (NR%2)? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
# timed CMD... -> runs CMD with its stdout in $tmp/out and prints the CPU seconds (user+system) it used.
timed() { local t; t=$( { TIMEFORMAT='%U %S'; time "$@" >"$tmp/out" 2>/dev/null; } 2>&1 ) || true; echo "$t" | awk '{print $1+$2}'; }
: >"$tmp/wrk"; : >"$tmp/ours"; : >"$tmp/wrkcpu"; : >"$tmp/ourscpu"; : >"$tmp/cpuratio"
for ((r = 1; r <= rounds; r++)); do
  wc=$(timed timeout $((secs + 20)) wrk -t1 -c12 -d"${secs}s" "$url")
  w=$(awk '/Requests\/sec/{print $2}' "$tmp/out"); wn=$(awk '/requests in/{print $1}' "$tmp/out")
  # shellcheck disable=SC2086
  oc=$(timed timeout $((secs + 20)) "$tmp/loadtest" -k -c 12 -t "$secs" -n 1000000000 ${LOADTEST_FLAGS:-} "$url")
  o=$(awk '/Failed requests/{f=$3} /Requests per second/{r=$4} END{if (f != 0) print "failed"; else print r}' "$tmp/out")
  on=$(awk '/Complete requests/{print $3}' "$tmp/out")
  [ -n "$w" ] && [ -n "$o" ] && [ "$o" != failed ] || { echo "vs-wrk: round $r did not finish (wrk: '$w', ours: '$o')" >&2; exit 1; }
  wu=$(echo "$wc * 1000000 / $wn" | bc -l) ou=$(echo "$oc * 1000000 / $on" | bc -l)
  printf 'round %d: wrk %5.1f us CPU/req %8.0f req/s   loadtest %5.1f us CPU/req %8.0f req/s   CPU/req ratio %.3f  rps ratio %.3f\n' \
    "$r" "$wu" "$w" "$ou" "$o" "$(echo "$ou / $wu" | bc -l)" "$(echo "$o / $w" | bc -l)"
  echo "$w" >>"$tmp/wrk"; echo "$o" >>"$tmp/ours"; echo "$wu" >>"$tmp/wrkcpu"; echo "$ou" >>"$tmp/ourscpu"
  echo "$ou / $wu" | bc -l >>"$tmp/cpuratio"
done
w=$(median <"$tmp/wrk"); o=$(median <"$tmp/ours"); wu=$(median <"$tmp/wrkcpu"); ou=$(median <"$tmp/ourscpu")
printf 'median:  wrk %5.1f us CPU/req %8.0f req/s   loadtest %5.1f us CPU/req %8.0f req/s\n' "$wu" "$w" "$ou" "$o"
printf 'ours/wrk: client CPU per request %.3f (median of the rounds'"'"' ratios %.3f; goal <= 1, lower is leaner); requests per second %.3f (goal >= 0.95)\n' \
  "$(echo "$ou / $wu" | bc -l)" "$(median <"$tmp/cpuratio")" "$(echo "$o / $w" | bc -l)"
