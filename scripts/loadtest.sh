#!/usr/bin/env bash
# scripts/loadtest.sh: what `make loadtest` runs: the lesson of a single-threaded server in a few minutes.
#
# Builds bin/gameserver and bin/loadtest, creates a player in a fresh temporary database (its HQ page is the
# dynamic URL), serves it on a free loopback port with its Prometheus metrics on another (-metrics-addr), and
# runs, section by section, each followed by a few sentences computed from its figures (`loadtest explain`):
#   1. the gap: static "/" against HQ at -c LOADTEST_CONCURRENCY (12), a new connection per request, then
#      keep-alive, beside the Perl server of 2002;
#   2. head-of-line blocking (`loadtest hol`): a 100 req/s probe of "/" alone, then while the clients load HQ;
#   3. a concurrency sweep of "/" and HQ (`loadtest sweep`, -c LOADTEST_SWEEP, default 1,4,16,64) and its knee;
#   4. a login storm: LOADTEST_STORM_CLIENTS (16) clients POST wrong passwords to /login, each connection from
#      the next of 127.0.0.2-127.0.0.254 (the server limits logins per address), while the probe runs;
#   5. the gap and head-of-line runs again against `gameserver -engine nethttp` with GOMAXPROCS=1 and with
#      all cores (skipped, saying so, when this gameserver has no -engine flag).
# Every run of sections 1 to 4 reads the server loop's metrics (loadtest -metrics). Each run takes
# LOADTEST_SECONDS (default 3) after a LOADTEST_WARMUP (default 1) second warm-up; a sweep step takes
# LOADTEST_SWEEP_SECONDS (1.5) after 0.5 s. Each run writes an HTML report (loadtest -html) and its JSON
# (-json-out) into LOADTEST_HTML (default bin/loadtest-report/; the JSON under json/; index.html links the
# reports, loadtest.txt is this output). Then it stops the server (SIGTERM, wait) and removes the temporary files, also on failure.
# LOADTEST_WORKERS (default 1) is the loop server's -workers (make loadtest-workers runs 1 and 2).
# Exit status: non-zero if anything fails, including any failed request or any non-2xx response (the storm's
# 403 and 429 answers excepted). Needs nothing but Go and bash. Loopback only, bounded in time.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go} BIN=${BIN:-bin}
secs=${LOADTEST_SECONDS:-3} warmup=${LOADTEST_WARMUP:-1} concurrency=${LOADTEST_CONCURRENCY:-12}
levels=${LOADTEST_SWEEP:-1,4,16,64} step=${LOADTEST_SWEEP_SECONDS:-1.5} stormers=${LOADTEST_STORM_CLIENTS:-16}
workers=${LOADTEST_WORKERS:-1}
html=${LOADTEST_HTML:-$BIN/loadtest-report}
json=$html/json
rm -rf "$json" "$html"/gap-*.html "$html"/nethttp-*.html "$html"/{hol,sweep,storm,index}.html # the last run's
mkdir -p "$json"
began=$(date +%s)

tmp=$(mktemp -d)
pid=
stop_server() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    for _ in $(seq 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && { echo "loadtest: the server ignored SIGTERM for 15 s; killing it" >&2; kill -KILL "$pid"; }
    wait "$pid" 2>/dev/null || true
  fi
  pid=
}
trap 'stop_server; rm -rf "$tmp"' EXIT
fail() { echo "loadtest: $*" >&2; [ -s "$tmp/server.log" ] && { echo "--- server log:" >&2; tail -20 "$tmp/server.log" >&2; }; exit 1; }

# start_server [ENV=VALUE...] [-- GAMESERVER FLAGS...]: serves $tmp/ss.db on a free loopback port with its
# metrics on another; sets pid, addr (host:port) and metrics (the metrics URL).
start_server() {
  local envs=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  : >"$tmp/server.log"
  env "${envs[@]}" "$BIN/gameserver" -addr 127.0.0.1:0 -metrics-addr 127.0.0.1:0 -db "$tmp/ss.db" -tick 10m "$@" \
    2>"$tmp/server.log" &
  pid=$!
  addr=
  for _ in $(seq 100); do # the slog line: msg=serving addr=127.0.0.1:PORT (text) or "msg":"serving",..."addr":"..." (JSON)
    addr=$(grep -E 'msg=("?)serving|"msg":"serving"' "$tmp/server.log" | grep -oE 'addr"?[=:]"?127\.0\.0\.1:[0-9]+' | grep -oE '127\.0\.0\.1:[0-9]+' | head -1 || true)
    [ -n "$addr" ] && break
    kill -0 "$pid" 2>/dev/null || fail "the server exited before serving"
    sleep 0.1
  done
  [ -n "$addr" ] || fail "no 'msg=serving addr=127.0.0.1:PORT' line from the server within 10 s"
  # With -workers 1 the server logs msg=metrics before msg=serving; with more, each worker serves its own
  # metrics (of its own loop), and loadtest reads none of them.
  metrics=$(grep -E 'msg=("?)metrics|"msg":"metrics"' "$tmp/server.log" | grep -oE '127\.0\.0\.1:[0-9]+' | head -1 || true)
  mflag=()
  if [ "$workers" = 1 ]; then
    [ -n "$metrics" ] || fail "no 'msg=metrics addr=127.0.0.1:PORT' line from the server"
    metrics="http://$metrics/metrics" mflag=(-metrics "$metrics")
  fi
  static="http://$addr/" dynamic="http://$addr/game?function=hq&tid=$tid"
}

section() { echo; echo "=== $*"; echo; }
lt() { "$BIN/loadtest" "$@"; }

main() {
  trap stop_server EXIT # main runs in a subshell of the pipeline below, which starts the servers
  "$GO" build -o "$BIN/" ./cmd/gameserver ./cmd/loadtest
  # -new-player prints the session id on stdout (and its password on stderr, not wanted here).
  tid=$("$BIN/gameserver" -db "$tmp/ss.db" -new-player loadtester 2>"$tmp/new-player.log") ||
    { cat "$tmp/new-player.log" >&2; fail "gameserver -new-player failed"; }
  [[ $tid =~ ^[0-9a-f]{32}$ ]] || fail "gameserver -new-player printed '$tid', not a 32-hex session id"
  echo "machine: $(nproc) cores, $(uname -sr), $("$GO" env GOVERSION), load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"

  start_server -- -workers "$workers"
  echo "gameserver (pid $pid, the epoll loop, -workers $workers) serving on $addr; player loadtester, tid $tid"
  if [ "$workers" = 1 ]; then echo "its metrics on $metrics"; else
    echo "-workers $workers: $workers loops, each with metrics of its own; loadtest reads none of them (no loop figures)"; fi
  mkdir -p "$json/loop"
  # -n: lift ab's 50000-request cap of -t so both pages run the full duration.
  for mode in "" -k; do
    what="a new connection per request" name=gap-new-connection
    [ -n "$mode" ] && what="keep-alive" name=gap-keep-alive
    section "1. The gap: loadtest gap -c $concurrency ${mode:+$mode }-t $secs ($what)"
    # shellcheck disable=SC2086
    lt gap -brief -c "$concurrency" $mode -t "$secs" -n 100000000 -warmup "$warmup" ${mflag[@]+"${mflag[@]}"} \
      -html "$html/$name.html" -json-out "$json/loop/$name.json" "$static" "$dynamic"
  done
  echo
  lt explain gap "$json/loop/gap-new-connection.json" "$json/loop/gap-keep-alive.json"

  section "2. Head-of-line blocking: loadtest hol -c $concurrency -k -t $secs (probe / at 100 req/s, load HQ)"
  lt hol -c "$concurrency" -k -t "$secs" -warmup "$warmup" ${mflag[@]+"${mflag[@]}"} -html "$html/hol.html" \
    -json-out "$json/loop/hol.json" "$static" "$dynamic"
  echo
  lt explain hol "$json/loop/hol.json"

  section "3. Concurrency sweep: loadtest sweep -k -t $step -c $levels (/ and HQ)"
  lt sweep -k -t "$step" -c "$levels" ${mflag[@]+"${mflag[@]}"} -html "$html/sweep.html" -json-out "$json/sweep.json" \
    "$static" "$dynamic"
  echo
  lt explain sweep "$json/sweep.json"

  section "4. Login storm: $stormers clients POST /login (wrong password) from 127.0.0.2-127.0.0.254 while the probe runs"
  # A login form's double-submit token: any 32 hex digits, the same in the ss_form cookie and the csrf field.
  token=5eed5eed5eed5eed5eed5eed5eed5eed
  # A name nobody has: each login is still one bcrypt comparison (against the dummy hash), but the failed-login
  # throttle, which holds back guesses at an account after 10 of them, leaves it alone.
  printf 'csrf=%s&name=nobody-at-all&password=not-the-password' "$token" >"$tmp/login.form"
  lt hol -c "$stormers" -t "$secs" -warmup "$warmup" ${mflag[@]+"${mflag[@]}"} -l -B 127.0.0.2-127.0.0.254 \
    -p "$tmp/login.form" -T application/x-www-form-urlencoded -H "Cookie: ss_form=$token" \
    -html "$html/storm.html" -json-out "$json/storm.json" "$static" "http://$addr/login"
  echo
  lt explain storm "$json/storm.json"
  kill -0 "$pid" 2>/dev/null || fail "the server died during the load test"
  stop_server

  section "5. The same game on net/http: gameserver -engine nethttp, GOMAXPROCS=1 and all $(nproc) cores"
  if ! "$BIN/gameserver" -h 2>&1 | grep -q -- '-engine'; then
    echo "skipped: this gameserver has no -engine flag (net/http under the same handlers, issue 10 part 5, is not merged yet)"
  else
    loop="epoll loop"
    [ "$workers" = 1 ] || loop="epoll loops (-workers $workers)"
    engines=("$loop=$json/loop")
    for procs in 1 "$(nproc)"; do
      dir=$json/nethttp-$procs
      mkdir -p "$dir"
      start_server GOMAXPROCS="$procs" -- -engine nethttp
      echo "gameserver -engine nethttp with GOMAXPROCS=$procs (pid $pid) serving on $addr (no event loop: no loop figures)"
      for mode in "" -k; do
        name=gap-new-connection
        [ -n "$mode" ] && name=gap-keep-alive
        # shellcheck disable=SC2086
        lt gap -brief -c "$concurrency" $mode -t "$secs" -n 100000000 -warmup "$warmup" \
          -html "$html/nethttp-$procs-$name.html" -json-out "$dir/$name.json" "$static" "$dynamic"
      done
      lt hol -c "$concurrency" -k -t "$secs" -warmup "$warmup" -html "$html/nethttp-$procs-hol.html" \
        -json-out "$dir/hol.json" "$static" "$dynamic"
      kill -0 "$pid" 2>/dev/null || fail "the net/http server died during the load test"
      stop_server
      engines+=("net/http GOMAXPROCS=$procs=$dir")
    done
    echo
    lt explain engines "${engines[@]}"
  fi

  echo
  echo "loadtest: no failed requests; $(($(date +%s) - began)) s in all; HTML reports in $html/ (index.html)"
}

main 2>&1 | tee "$tmp/out.txt"
status=${PIPESTATUS[0]}
cp "$tmp/out.txt" "$html/loadtest.txt"
{
  echo '<!doctype html><html lang="en"><meta charset="utf-8"><title>make loadtest</title>'
  echo '<style>body{font:16px/1.4 system-ui,sans-serif;margin:2em auto;max-width:70em}pre{font-size:13px;overflow-x:auto}</style>'
  echo '<h1>make loadtest</h1><ul>'
  for f in "$html"/*.html; do
    b=$(basename "$f")
    [ "$b" = index.html ] || echo "<li><a href=\"$b\">$b</a></li>"
  done
  echo '</ul><h2>Output</h2><pre>'
  sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g' "$tmp/out.txt"
  echo '</pre></html>'
} >"$html/index.html"
exit "$status"
