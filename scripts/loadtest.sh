#!/usr/bin/env bash
# scripts/loadtest.sh: what `make loadtest` runs: the lessons of a single-threaded server, each mistake beside its
# fix, in under three minutes, with figures that survive a busy machine.
#
# Builds bin/gameserver and bin/loadtest, seeds a world of LOADTEST_PLAYERS (1500) players with feeds, dossiers,
# news and posts (gameserver -seed-players: one bcrypt hash in all) plus the player loadtester (HQ is its page),
# and serves copies of it from several servers at once, each on loopback with its Prometheus metrics:
#   loop           the epoll loop as deployed (-workers LOADTEST_WORKERS, default 1)
#   loop-nocache   the loop with the teaching switch -no-read-cache
#   loop-hash      the loop with the teaching switch -hash-on-loop
#   nethttp        -engine nethttp (GOMAXPROCS: the servers' cores, below), and nethttp-nocache, nethttp-hash with the teaching switches
# Ports: free ones by default; with LOADTEST_PORT_BASE=N (make loadtest PORT_BASE=N) server i of the list above
# listens on 127.0.0.1:N+i and serves its metrics on N+20+i.
#
# Sections, each run LOADTEST_REPEATS (3) times, interleaved (one repeat of every variant, then the next), each
# followed by a table of medians [ranges] and sentences computed from the figures (`loadtest explain`), server CPU
# per request (process_cpu_seconds_total) first:
#   1. the gap: static "/" against HQ at -c LOADTEST_CONCURRENCY (12), a new connection each and keep-alive;
#   2. head-of-line blocking: a probe of "/" at 200 req/s alone, then while 8 connections load the last page of
#      the dossiers at LOADTEST_HOL_RATE (80) req/s, open loop, on loop-nocache (before) and loop (after), each
#      for LOADTEST_HOL_SECONDS (2.5): the probe's p99 alone is the 5th-worst of 500, not the 2nd of 200. On a
#      machine judged busy or saturated the load is first fitted to the CPU the loop gets (fit_hol): a rate it can
#      serve at half its capacity, each phase long enough for the probe's p99 by the loop's attribution;
#   3. a login storm: LOADTEST_STORM_CLIENTS (8) clients POST wrong passwords to /login from 127.0.0.2-254 while
#      the probe runs, on loop-hash (before) and loop (after);
#   4. a concurrency sweep of "/" and HQ on the loop (-c LOADTEST_SWEEP, default 1,8,64), one run a step;
#   5. the engines: server CPU per request of the gap with keep-alive on the loop and on nethttp, and the pairs of
#      sections 2 and 3 on net/http (nethttp-nocache and nethttp, nethttp-hash and nethttp).
# A run measures LOADTEST_SECONDS (1) after LOADTEST_WARMUP (0.3) seconds of warm-up. Every run writes an HTML report
# (loadtest -html, NAME-RUN-REPEAT.html) and its JSON (-json-out) under LOADTEST_HTML (default
# bin/loadtest-report/; JSON under json/SERVER/; index.html links the reports and every run's JSON, grouped by
# server; loadtest.txt is this output).
# Pinning (scripts/pin.sh): on 2 or more cores the servers run on CPU 0 and bin/loadtest on the others, so that the
# load generator does not take the loop's core; LOADTEST_CPU (make loadtest CPU=...) changes it: off, the servers' CPU
# list, or SERVERS:LOADGENERATOR. With LOADTEST_WORKERS other than 1 nothing is pinned unless LOADTEST_CPU says so.
# The output opens and closes with the machine line (loadtest explain machine): cores, kernel, Go, load average and
# a verdict, quiet, busy or saturated, judged from a light probe of the loop server alone (its p99, the loop's
# share of time waiting for a CPU, the load generator's own lateness; at the end with the probes alone of the
# head-of-line runs), which every explain step is told (-machine): on a busy machine the lessons lead with the
# loop's own attribution of each wait and CPU per request, and the head-of-line load is fitted to what the loop's
# core can serve (section 2's first sentence says what was scaled and why; the net/http pair runs the same load).
# Then it stops the servers (SIGTERM, wait) and removes the temporary files, also on failure.
# Exit status: non-zero if anything fails, including any failed request or any non-2xx response (the storm's
# 403 and 429 answers excepted). Needs nothing but Go and bash. Loopback only, bounded in time.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go} BIN=${BIN:-bin}
secs=${LOADTEST_SECONDS:-1} warmup=${LOADTEST_WARMUP:-0.3} concurrency=${LOADTEST_CONCURRENCY:-12}
repeats=${LOADTEST_REPEATS:-3} players=${LOADTEST_PLAYERS:-1500} holrate=${LOADTEST_HOL_RATE:-80} holsecs=${LOADTEST_HOL_SECONDS:-2.5} probe=200
levels=${LOADTEST_SWEEP:-1,8,64} stormers=${LOADTEST_STORM_CLIENTS:-8} workers=${LOADTEST_WORKERS:-1}
portbase=${LOADTEST_PORT_BASE:-}
html=${LOADTEST_HTML:-$BIN/loadtest-report}
json=$html/json
[[ $repeats =~ ^[1-9][0-9]*$ ]] || { echo "loadtest: LOADTEST_REPEATS must be a positive number, not '$repeats'" >&2; exit 2; }
[[ -z $portbase || $portbase =~ ^[1-9][0-9]{2,4}$ && $portbase -le 65500 ]] ||
  { echo "loadtest: LOADTEST_PORT_BASE must be a port from 100 to 65500, not '$portbase'" >&2; exit 2; }
. scripts/pin.sh
cpu=${LOADTEST_CPU:-}
[[ -n $cpu || $workers == 1 ]] || cpu=off # -workers N wants the cores
pin_parse CPU "$cpu" "$(nproc)" || exit 2
rm -rf "$json" "$html"/*.html # the last run's
mkdir -p "$json"
began=$(date +%s)

tmp=$(mktemp -d)
declare -A pid addr metrics
servers=(loop loop-nocache loop-hash nethttp nethttp-nocache nethttp-hash)
stop_servers() {
  local name p
  for name in "${!pid[@]}"; do
    p=${pid[$name]}
    kill -0 "$p" 2>/dev/null && kill -TERM "$p"
  done
  for name in "${!pid[@]}"; do
    p=${pid[$name]}
    for _ in $(seq 150); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$p" 2>/dev/null && { echo "loadtest: server $name ignored SIGTERM for 15 s; killing it" >&2; kill -KILL "$p"; }
    wait "$p" 2>/dev/null || true
    unset "pid[$name]"
  done
}
trap 'stop_servers; rm -rf "$tmp"' EXIT
fail() {
  echo "loadtest: $*" >&2
  for log in "$tmp"/*.log; do [ -s "$log" ] && { echo "--- $log:" >&2; tail -5 "$log" >&2; }; done
  exit 1
}

# start_server NAME [ENV=VALUE...] [-- GAMESERVER FLAGS...]: serves a copy of the seeded world as NAME (the i-th
# of servers) on loopback with its metrics; sets pid, addr and metrics[NAME] once it serves.
start_server() {
  local name=$1 envs=() i a m
  shift
  while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  for i in "${!servers[@]}"; do [ "${servers[$i]}" = "$name" ] && break; done
  a=127.0.0.1:0 m=127.0.0.1:0
  [ -n "$portbase" ] && a=127.0.0.1:$((portbase + i)) m=127.0.0.1:$((portbase + 20 + i))
  cp "$tmp/world.db" "$tmp/$name.db"
  env ${envs[@]+"${envs[@]}"} ${pin_server:+taskset -c "$pin_server"} "$BIN/gameserver" -addr "$a" -metrics-addr "$m" -db "$tmp/$name.db" -tick 10m "$@" \
    2>"$tmp/$name.log" &
  pid[$name]=$!
}

# await_server NAME: waits for NAME's "msg=serving" line and reads its addresses.
await_server() {
  local name=$1 log=$tmp/$1.log a=
  for _ in $(seq 150); do # the slog line: msg=serving addr=127.0.0.1:PORT
    a=$(grep -E 'msg=("?)serving' "$log" | grep -oE 'addr"?[=:]"?127\.0\.0\.1:[0-9]+' | grep -oE '127\.0\.0\.1:[0-9]+' | head -1 || true)
    [ -n "$a" ] && break
    kill -0 "${pid[$name]}" 2>/dev/null || fail "server $name exited before serving"
    sleep 0.1
  done
  [ -n "$a" ] || fail "no 'msg=serving addr=127.0.0.1:PORT' line from server $name within 15 s"
  addr[$name]=$a
  # With -workers 1 the server logs msg=metrics before msg=serving; with more, each worker serves metrics of
  # its own loop, and loadtest reads none of them (no loop figures, no CPU).
  metrics[$name]=
  local m
  m=$(grep -E 'msg=("?)metrics' "$log" | grep -oE '127\.0\.0\.1:[0-9]+' | head -1 || true)
  [ -n "$m" ] && metrics[$name]="http://$m/metrics"
  local warn
  warn=$(grep -m1 'level=WARN msg="teaching switch' "$log" | sed -E 's/.*msg="([^"]*)" switches="?([^"]*)"?$/\1 (\2)/' || true)
  [ -z "$warn" ] || echo "$name warns: $warn"
}

section() { echo; echo "=== $* (at $(($(date +%s) - began)) s)"; echo; }
lt() { ${pin_client:+taskset -c "$pin_client"} "$BIN/loadtest" "$@"; }
# mflag NAME: the -metrics flag for NAME's runs, none when its metrics are not read.
mflag() { [ -n "${metrics[$1]}" ] && echo "-metrics ${metrics[$1]}" || true; }
# htmlflag R FILE: -html FILE-R.html, every repeat's report (the text's figures are medians over them).
htmlflag() { echo "-html $html/$2-$1.html"; }
# settle NAME: one request to NAME, answered once its loop is through what a run left queued (a hashing backlog),
# so that it takes no CPU from the next run.
settle() { lt -s 60 "http://${addr[$1]}/" >/dev/null; }
# files NAME RUN: NAME's repeats of RUN as explain takes them, comma-separated.
files() { local f=() r; for r in $(seq "$repeats"); do f+=("$json/$1/$2-$r.json"); done; (IFS=,; echo "${f[*]}"); }

# gap NAME R MODE: one repeat of the gap on NAME (MODE "" or -k).
gap() {
  local name=$1 r=$2 mode=$3 run=gap-new-connection
  [ -n "$mode" ] && run=gap-keep-alive
  # shellcheck disable=SC2046 # -n: lift ab's 50000-request cap of -t so both pages run the whole time
  lt gap -brief -c "$concurrency" $mode -t "$secs" -n 100000000 -warmup "$warmup" $(mflag "$name") \
    -title "The gap on $name, ${run#gap-}, repeat $r of $repeats" $(htmlflag "$r" "$name-$run") -json-out "$json/$name/$run-$r.json" "http://${addr[$name]}/" \
    "http://${addr[$name]}/game?function=hq&tid=$tid" >/dev/null
}

# holpage NAME: the head-of-line scenario's loaded page on NAME, the last page of the dossiers.
holpage() { echo "http://${addr[$1]}/game?function=dossiers&page=1000&tid=$tid"; }

# hol NAME R: one repeat of the head-of-line scenario on NAME: the probe at $probe req/s, the load at $holrate, open loop.
hol() {
  local name=$1 r=$2
  # shellcheck disable=SC2046
  lt hol -c 8 -k -rate "$probe" -load-rate "$holrate" -t "$holsecs" -warmup "$warmup" $(mflag "$name") \
    -title "Head-of-line blocking on $name, repeat $r of $repeats" $(htmlflag "$r" "$name-hol") \
    -json-out "$json/$name/hol-$r.json" "http://${addr[$name]}/" "$(holpage "$name")" >/dev/null
}

# fit_hol: on a machine not judged quiet, fits the head-of-line load to the CPU the loop gets (loadtest explain
# hol-scale, the lesson's FitHOL): a run of the loaded page alone on loop-nocache (one connection, closed loop, 1 s,
# json/machine/hol-page.json) gives the wall time a page holds the loop, its CPU and its wait for one; the load then
# asks for half of what the loop serves, when that is under LOADTEST_HOL_RATE, and each phase lasts long enough for
# 15 pages and about 300 of the probe's answers (at most 4 times LOADTEST_HOL_SECONDS). Sets holrate, holsecs and
# holnote, the sentence that says what was scaled and why (holfit when it was). On a quiet machine it does nothing.
fit_hol() {
  holnote= holfit=
  [ "$verdict" != quiet ] && [ -n "${metrics[loop-nocache]}" ] || return 0
  # shellcheck disable=SC2046
  lt -c 1 -k -t 1 -warmup "$warmup" $(mflag loop-nocache) -json-out "$json/machine/hol-page.json" "$(holpage loop-nocache)" >/dev/null
  holnote=$(ex hol-scale "$holrate" "$holsecs" "$probe" "no read cache=$json/machine/hol-page.json" "$json/machine/start.json")
  local fitted='^Scaled to this machine: the load at ([0-9.]+) req/s for ([0-9.]+) s a phase'
  [[ $holnote =~ $fitted ]] && holrate=${BASH_REMATCH[1]} holsecs=${BASH_REMATCH[2]} holfit=", the load as section 2 fitted it"
  return 0
}

# storm NAME R: one repeat of the login storm on NAME, each connection from the next of 127.0.0.2-127.0.0.254.
storm() {
  local name=$1 r=$2
  # shellcheck disable=SC2046
  # -s 60: with the hash on the loop the probe's wait is the lesson, seconds long on a busy machine, not a failure.
  lt hol -c "$stormers" -rate 200 -t "$secs" -warmup "$warmup" -s 60 $(mflag "$name") -l -B 127.0.0.2-127.0.0.254 \
    -p "$tmp/login.form" -T application/x-www-form-urlencoded -H "Cookie: ss_form=$token" -expect 403,429 \
    -title "Login storm on $name, repeat $r of $repeats" $(htmlflag "$r" "$name-storm") \
    -json-out "$json/$name/storm-$r.json" "http://${addr[$name]}/" "http://${addr[$name]}/login" >/dev/null
  settle "$name"
}

# setup: seeds the world, starts the servers and waits for them; prints what it did.
setup() {
  echo "pinning: $pin_note"
  echo "$("$BIN/loadtest" -version)"
  "$BIN/gameserver" -db "$tmp/world.db" -seed-players "$players" || fail "gameserver -seed-players failed"
  # -new-player prints the session id on stdout (and its password on stderr, not wanted here); -max-players 0,
  # since the seeded world is far past the default cap of 50 a registration would meet.
  tid=$("$BIN/gameserver" -db "$tmp/world.db" -max-players 0 -new-player loadtester 2>"$tmp/new-player.log") ||
    { cat "$tmp/new-player.log" >&2; fail "gameserver -new-player failed"; }
  [[ $tid =~ ^[0-9a-f]{32}$ ]] || fail "gameserver -new-player printed '$tid', not a 32-hex session id"
  # A login form's double-submit token: any 32 hex digits, the same in the ss_form cookie and the csrf field.
  token=5eed5eed5eed5eed5eed5eed5eed5eed
  # A name nobody has: each login is still one bcrypt comparison (against the dummy hash), but the failed-login
  # throttle, which holds back guesses at an account after 10 of them, leaves it alone.
  printf 'csrf=%s&name=nobody-at-all&password=not-the-password' "$token" >"$tmp/login.form"

  engines=no
  "$BIN/gameserver" -h 2>&1 | grep -q -- '-engine' && engines=yes
  start_server loop -- -workers "$workers"
  start_server loop-nocache -- -no-read-cache
  start_server loop-hash -- -hash-on-loop
  if [ "$engines" = yes ]; then
    start_server nethttp -- -engine nethttp
    start_server nethttp-nocache -- -engine nethttp -no-read-cache
    start_server nethttp-hash -- -engine nethttp -hash-on-loop
  fi
  local name
  for name in "${servers[@]}"; do
    [ -n "${pid[$name]:-}" ] || continue
    await_server "$name"
    mkdir -p "$json/$name"
  done
  echo "servers: $(for n in "${servers[@]}"; do [ -n "${addr[$n]:-}" ] && printf '%s %s  ' "$n" "${addr[$n]}"; done)"
  echo "player loadtester, tid $tid; $repeats interleaved repeats of every run, each ${secs} s after ${warmup} s of warm-up"
  [ "$workers" = 1 ] || echo "loop: -workers $workers, each worker's metrics its own: no loop figures or CPU for it"
}

# quiesce: waits, 5 s at most, until the servers, just started, are done starting (their CPU time, from
# /proc/PID/stat, grows less than a third of a core's over half a second), so that the first probe judges the
# machine, not the servers' start on the loop's core. Where /proc is not, it waits for nothing.
quiesce() {
  local tck i p f total last=-1
  tck=$(getconf CLK_TCK 2>/dev/null || echo 100)
  for i in $(seq 10); do
    total=0
    for p in "${pid[@]}"; do
      f=$(cut -d' ' -f14,15 "/proc/$p/stat" 2>/dev/null) || return 0
      total=$((total + ${f% *} + ${f#* }))
    done
    [ "$last" -ge 0 ] && [ $((3 * (total - last))) -lt $((tck / 2)) ] && return 0
    last=$total
    sleep 0.5
  done
}

# probe_machine FILE: a light probe of the loop server with nothing else running (/ at 200 req/s on one
# connection for 2 s, open loop), for the machine line (loadtest explain machine).
probe_machine() {
  mkdir -p "$(dirname "$1")"
  # shellcheck disable=SC2046
  lt -c 1 -k -rate 200 -t 2 -warmup "$warmup" $(mflag loop) -json-out "$1" "http://${addr[loop]}/" >/dev/null
}

# explain ARGS...: loadtest explain, unpinned: it only reads files, and it says how many cores the machine has
# (runtime.NumCPU: the process's CPU affinity, 1 when pinned to one core).
explain() { "$BIN/loadtest" explain "$@"; }
# ex KIND ARGS...: loadtest explain, told the machine's verdict.
ex() { explain -machine "$verdict" "$@"; }

main() {
  trap stop_servers EXIT # main runs in a subshell of the pipeline below, which starts the servers
  "$GO" build -buildvcs=auto -o "$BIN/" ./cmd/gameserver ./cmd/loadtest
  # What comes before the first measurement is held back until the machine line, judged from it, opens the output.
  { setup; } >"$tmp/setup.txt"
  quiesce
  probe_machine "$json/machine/start.json"
  local mline
  mline=$(explain machine "$json/machine/start.json")
  echo "$mline"
  verdict=$(sed -E 's/^machine: [^;]*; ([a-z]+).*/\1/' <<<"$mline")
  case $verdict in quiet | busy | saturated) ;; *) verdict=quiet ;; esac # "not judged": nothing measured, nothing to hold back
  cat "$tmp/setup.txt"

  section "1. The gap: static / against HQ, a new connection each and keep-alive (-c $concurrency)"
  local r
  for r in $(seq "$repeats"); do
    gap loop "$r" ""
    gap loop "$r" -k
    [ "$engines" = no ] || gap nethttp "$r" -k
  done
  ex gap "a new connection each=$(files loop gap-new-connection)" "keep-alive=$(files loop gap-keep-alive)"

  fit_hol
  section "2. Head-of-line blocking: one slow page makes everyone wait (probe / at $probe req/s; 8 connections load the last page of the dossiers at $holrate req/s)"
  [ -z "$holnote" ] || printf '%s\n\n' "$holnote"
  echo "before: loop-nocache (-no-read-cache: every page reads the database, on the loop); after: loop (the read cache on)"
  echo
  for r in $(seq "$repeats"); do
    hol loop-nocache "$r"
    hol loop "$r"
  done
  ex hol "no read cache=$(files loop-nocache hol)" "read cache=$(files loop hol)"

  section "3. Login storm: $stormers clients POST /login (wrong password) from 127.0.0.2-127.0.0.254 while the probe runs"
  echo "before: loop-hash (-hash-on-loop: bcrypt on the loop, as a 2002 server did it); after: loop (bcrypt on the worker pool)"
  echo
  for r in $(seq "$repeats"); do
    storm loop-hash "$r"
    storm loop "$r"
  done
  ex storm "hash on the loop=$(files loop-hash storm)" "hash on the pool=$(files loop storm)"

  section "4. Concurrency sweep: loadtest sweep -k -t $secs -c $levels (/ and HQ on the loop, one run a step)"
  # shellcheck disable=SC2046
  lt sweep -k -t "$secs" -warmup "$warmup" -c "$levels" $(mflag loop) -title "Concurrency sweep on loop" -html "$html/sweep.html" -json-out "$json/loop/sweep.json" \
    "http://${addr[loop]}/" "http://${addr[loop]}/game?function=hq&tid=$tid" >/dev/null
  ex sweep "$json/loop/sweep.json"

  section "5. The engines: the same game on net/http (-engine nethttp: a goroutine per connection, handlers under one lock)"
  if [ "$engines" = no ]; then
    echo "skipped: this gameserver has no -engine flag"
  else
    ex engines "epoll loop=$json/loop" "net/http=$json/nethttp"
    echo
    echo "The head-of-line pair on net/http (GOMAXPROCS=$(pin_count "$pin_server")): nethttp-nocache, then nethttp${holfit:+$holfit ($holrate req/s for $holsecs s a phase)}"
    echo
    for r in $(seq "$repeats"); do
      hol nethttp-nocache "$r"
      hol nethttp "$r"
    done
    ex hol "no read cache=$(files nethttp-nocache hol)" "read cache=$(files nethttp hol)"
    echo
    echo "The login storm pair on net/http: nethttp-hash (the hash under the handlers' lock), then nethttp"
    echo
    for r in $(seq "$repeats"); do
      storm nethttp-hash "$r"
      storm nethttp "$r"
    done
    ex storm "hash under the lock=$(files nethttp-hash storm)" "hash off it=$(files nethttp storm)"
  fi
  for name in "${!pid[@]}"; do kill -0 "${pid[$name]}" 2>/dev/null || fail "server $name died during the load test"; done

  echo
  probe_machine "$json/machine/end.json"
  # shellcheck disable=SC2046 # the probes alone of the loop's head-of-line runs judge too
  explain machine "$json/machine/end.json" $(ls "$json"/loop/hol-*.json "$json"/loop-nocache/hol-*.json 2>/dev/null)
  echo "loadtest: no failed requests; $(($(date +%s) - began)) s in all, load average now $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown); HTML reports in $html/ (index.html)"
}

main 2>&1 | tee "$tmp/out.txt"
status=${PIPESTATUS[0]}
cp "$tmp/out.txt" "$html/loadtest.txt"
{
  echo '<!doctype html><html lang="en"><meta charset="utf-8"><title>make loadtest</title>'
  echo '<style>body{font:16px/1.4 system-ui,sans-serif;margin:2em auto;max-width:70em}pre{font-size:13px;overflow-x:auto}</style>'
  echo '<h1>make loadtest</h1><ul>'
  for f in "$html"/*.html; do
    [ -e "$f" ] || continue
    b=$(basename "$f")
    [ "$b" = index.html ] || echo "<li><a href=\"$b\">$b</a></li>"
  done
  echo '</ul><h2>JSON results, by server</h2>'
  for d in "$json"/*/; do
    [ -d "$d" ] || continue
    srv=$(basename "$d")
    echo "<h3>$srv</h3><ul>"
    for f in "$d"*.json; do
      [ -e "$f" ] || continue
      b=$(basename "$f")
      echo "<li><a href=\"json/$srv/$b\">$b</a></li>"
    done
    echo '</ul>'
  done
  echo '<h2>Output</h2><pre>'
  sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g' "$tmp/out.txt"
  echo '</pre></html>'
} >"$html/index.html"
exit "$status"
