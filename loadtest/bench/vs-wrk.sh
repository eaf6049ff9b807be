#!/bin/bash
# vs-wrk.sh [ROUNDS] [SECONDS]
#
# Checks that our load generator is not the bottleneck: starts nginx with one worker serving a
# 2159-byte page (the nginx seed's size) on a free loopback port, then alternates, in one run,
#   wrk -t1 -c12 -dSECONDSs URL                 (one thread, keep-alive)
#   loadtest -k -c 12 -t SECONDS URL            (ours, keep-alive, same concurrency and time)
# ROUNDS times each (default 3, 5 s each) and prints the medians and ours/wrk (goal: >= 0.95).
# Set LOADTEST_FLAGS to pass more flags to ours, GOMAXPROCS to try other settings.
# Needs: go, nginx, wrk (Debian: apt-get install -y nginx-light wrk). Loopback only, bounded in time.
set -euo pipefail
rounds=${1:-3} secs=${2:-5}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
for tool in go nginx wrk; do
  command -v "$tool" >/dev/null || { echo "vs-wrk: $tool is not installed (apt-get install -y nginx-light wrk)" >&2; exit 2; }
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
: >"$tmp/wrk"; : >"$tmp/ours"
for ((r = 1; r <= rounds; r++)); do
  w=$(timeout $((secs + 20)) wrk -t1 -c12 -d"${secs}s" "$url" | awk '/Requests\/sec/{print $2}')
  # shellcheck disable=SC2086
  o=$(timeout $((secs + 20)) "$tmp/loadtest" -k -c 12 -t "$secs" -n 1000000000 ${LOADTEST_FLAGS:-} "$url" |
    awk '/Failed requests/{f=$3} /Requests per second/{r=$4} END{if (f != 0) print "failed"; else print r}')
  [ -n "$w" ] && [ -n "$o" ] && [ "$o" != failed ] || { echo "vs-wrk: round $r did not finish (wrk: '$w', ours: '$o')" >&2; exit 1; }
  printf 'round %d: wrk %10.0f req/s   loadtest %10.0f req/s   ratio %.3f\n' "$r" "$w" "$o" "$(echo "$o / $w" | bc -l)"
  echo "$w" >>"$tmp/wrk"; echo "$o" >>"$tmp/ours"
done
w=$(median <"$tmp/wrk"); o=$(median <"$tmp/ours")
printf 'median:  wrk %10.0f req/s   loadtest %10.0f req/s   ours/wrk %.3f (goal >= 0.95)\n' "$w" "$o" "$(echo "$o / $w" | bc -l)"
