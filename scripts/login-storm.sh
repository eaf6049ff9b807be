#!/usr/bin/env bash
# login-storm.sh: a sustained login storm against one server on loopback, and what it costs the loop and a
# real player (issue 26).
#
#   scripts/login-storm.sh [BIN]       # BIN: the folder of the gameserver and loadtest to run (default bin/,
#                                      # built first with make build unless STORM_NO_BUILD=1)
#
# The storm: STORM_ADDRS (200) addresses, 127.0.0.2 and up, each POSTing a wrong login for a name nobody has
# (a bcrypt hash each, as for a name that exists) at the per-address limit, one every 10 s (handlers.AuthRefill):
# STORM_RATE (20) requests a second in all, an open loop, each request on a new connection from the next address
# in turn, all with one form token. loadtest's hol scenario runs it: a probe of the static front page at 50
# requests a second alone for STORM_SECS (60) seconds, then the probe and the storm for STORM_SECS more.
# Meanwhile a real player logs in with the right password every USER_EVERY (3) seconds, each time from a fresh
# address (127.0.1.N) and browser (a new cookie jar, a form of its own), and the loop's longest turn in the last
# 10 to 20 seconds (gameserver_loop_longest_turn_recent_seconds) is read every second from the server's metrics.
#
# It prints the load average before and after; the loop's longest turn when idle (21 s after the start), with
# the probe alone, and with the storm (read from 20 s into it on, when the window holds only the storm's turns);
# the loop's time per request during the storm, busy, on a CPU and waiting for one (its thread's, from the
# kernel: a figure that grows with the storm's size is work that does); the real player's logins during the
# storm and before it (status and seconds; 303 is logged in, and the message of any refusal); and loadtest's
# figures for the probe and the storm. Pin the server and the load to different cores with STORM_SERVER_CPUS (0)
# and STORM_LOAD_CPUS (1) (taskset; empty: no pinning). Run it on a quiet machine: its figures are the
# machine's as much as the server's.
set -euo pipefail

BIN=${1:-bin}
secs=${STORM_SECS:-60} addrs=${STORM_ADDRS:-200} rate=${STORM_RATE:-20} every=${USER_EVERY:-3}
server_cpus=${STORM_SERVER_CPUS-0} load_cpus=${STORM_LOAD_CPUS-1}
[ "${STORM_NO_BUILD:-0}" = 1 ] || [ "$BIN" != bin ] || make -s build
for b in gameserver loadtest; do [ -x "$BIN/$b" ] || { echo "login-storm: no $BIN/$b" >&2; exit 1; }; done

tmp=$(mktemp -d)
server= storm=
cleanup() {
  local p
  for p in $storm $server; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
# pin CPUS CMD...: CMD on those cpus (taskset), or anywhere for CPUS empty, in place of the shell that runs
# it: only in the background (pin ... &), so that $! is CMD's own pid, for cleanup's kill.
pin() { local c=$1; shift; if [ -n "$c" ]; then exec taskset -c "$c" "$@"; else exec "$@"; fi; }

# The real player, made before the server starts (a command that writes the game is refused beside one).
"$BIN/gameserver" -db "$tmp/ss.db" -new-player realuser >/dev/null 2>"$tmp/new-player.log"
password=$(sed -nE 's/.*password ([^ ]+)$/\1/p' "$tmp/new-player.log")
[ -n "$password" ] || { cat "$tmp/new-player.log" >&2; exit 1; }

pin "$server_cpus" "$BIN/gameserver" -db "$tmp/ss.db" -addr 127.0.0.1:0 -metrics-addr 127.0.0.1:0 -max-players 0 \
  2>"$tmp/server.log" &
server=$!
for _ in $(seq 100); do grep -q 'msg=serving' "$tmp/server.log" && break; sleep 0.1; done
addr=$(grep -oE 'msg=serving addr=[0-9.:]+' "$tmp/server.log" | sed 's/.*addr=//')
metrics=http://$(grep -oE 'msg=metrics addr=[0-9.:]+' "$tmp/server.log" | sed 's/.*addr=//')/metrics
[ -n "$addr" ] || { cat "$tmp/server.log" >&2; exit 1; }
base=http://$addr

longest() { curl -s "$metrics" | awk '$1 == "gameserver_loop_longest_turn_recent_seconds" { printf "%.1f", $2 * 1000 }'; }
# loopFigures: the server's requests and its loop's busy time, CPU time and CPU wait (seconds) so far, on one line.
loopFigures() {
  curl -s "$metrics" | awk '$1 == "gameserver_requests_total" { r = $2 } $1 == "gameserver_loop_busy_seconds_total" { b = $2 }
    $1 == "gameserver_loop_cpu_seconds_total" { c = $2 } $1 == "gameserver_loop_cpu_wait_seconds_total" { w = $2 }
    END { print r + 0, b + 0, (c == "" ? "-" : c), (w == "" ? "-" : w) }' # -: a build without them
}

# login JAR FROM NAME PASSWORD: the form's token, then the POST; prints "STATUS SECONDS START REASON" (START:
# seconds since the epoch; REASON: the refusal's message, for a status other than 303).
login() {
  local jar=$1 from=$2 token start out
  token=$(curl -s --interface "$from" -c "$jar" -b "$jar" "$base/login" | sed -nE 's/.*name="csrf" value="([^"]+)".*/\1/p' | head -1)
  start=$(date +%s.%N)
  out=$(curl -s --interface "$from" -o "$jar.body" -w '%{http_code} %{time_total}' -c "$jar" -b "$jar" -m 60 \
    --data-urlencode "csrf=$token" --data-urlencode "name=$3" --data-urlencode "password=$4" "$base/login")
  echo "$out $start $(sed -nE 's/.*role="alert">([^<]*)<.*/\1/p' "$jar.body" | head -1)"
}

# The storm's form: one token and its cookie serve every address.
curl -s -c "$tmp/storm.jar" "$base/login" >"$tmp/login.html"
token=$(sed -nE 's/.*name="csrf" value="([^"]+)".*/\1/p' "$tmp/login.html" | head -1)
cookie=$(awk '$6 == "ss_form" { print $7 }' "$tmp/storm.jar")
printf 'csrf=%s&name=mallory&password=not-the-password' "$token" >"$tmp/login.form"

echo "machine: $(nproc) cores; server on cpus '${server_cpus}', load on '${load_cpus}'; revision $("$BIN/gameserver" -version)"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
sleep 21 # the start's turns out of the window gameserver_loop_longest_turn_recent_seconds covers
echo "loop's longest turn idle (in the 10 to 20 s before the probe): $(longest) ms"

last=$((addrs + 1))
pin "$load_cpus" "$BIN/loadtest" hol -t "$secs" -c "$addrs" -load-rate "$rate" -rate 50 -s 60 -l -r \
  -B "127.0.0.2-127.0.$((last / 256)).$((last % 256))" -p "$tmp/login.form" -T application/x-www-form-urlencoded \
  -H "Cookie: ss_form=$cookie" -metrics "$metrics" "$base/" "$base/login" >"$tmp/storm.txt" 2>&1 &
storm=$!
# The storm's phase: loadtest hol runs the probe alone for STORM_SECS first, then the probe and the storm.
storm_at=$(awk -v a="$(date +%s.%N)" -v s="$secs" 'BEGIN { printf "%.3f", a + s }')

peak_alone=0 peak_storm=0
during=
user=0
users=()
: >"$tmp/user.txt"
next=$(date +%s.%N)
while kill -0 "$storm" 2>/dev/null; do
  t=$(longest) now=$(date +%s.%N)
  if awk -v n="$storm_at" -v now="$now" 'BEGIN { exit !(now < n) }'; then
    peak_alone=$(awk -v a="$peak_alone" -v b="${t:-0}" 'BEGIN { print (b > a) ? b : a }')
  elif [ -z "$during" ]; then
    during=$(loopFigures)
  elif awk -v n="$storm_at" -v now="$now" 'BEGIN { exit !(now >= n + 20) }'; then
    peak_storm=$(awk -v a="$peak_storm" -v b="${t:-0}" 'BEGIN { print (b > a) ? b : a }')
  fi
  if awk -v n="$next" -v now="$(date +%s.%N)" 'BEGIN { exit !(now >= n) }'; then
    user=$((user + 1))
    (login "$tmp/user-$user.jar" "127.0.1.$((user % 250 + 1))" realuser "$password" >>"$tmp/user.txt") &
    users+=($!)
    next=$(awk -v n="$next" -v e="$every" 'BEGIN { printf "%.3f", n + e }')
  fi
  sleep 1
done
after=$(loopFigures)
t=$(longest)
peak_storm=$(awk -v a="$peak_storm" -v b="${t:-0}" 'BEGIN { print (b > a) ? b : a }')
wait "$storm" || true
[ ${#users[@]} = 0 ] || wait "${users[@]}" || true

echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "loop's longest turn with the probe alone: $peak_alone ms; with the storm: $peak_storm ms (the greatest of gameserver_loop_longest_turn_recent_seconds, read every second)"
echo "the loop during the storm, per request (the storm's, the probe's and the player's): $(echo "${during:-0 0 0 0} $after" |
  awk '{ n = $5 - $1; if (n < 1) n = 1; printf "busy %.3f ms, ", ($6 - $2) * 1000 / n
    if ($7 == "-" || $3 == "-") printf "(CPU time: not measured by this build) "
    else printf "on a CPU %.3f ms, waiting for a CPU %.3f ms ", ($7 - $3) * 1000 / n, ($8 - $4) * 1000 / n
    printf "(%d requests)", n }')"
# The real player's logins while the storm ran.
awk -v t="$storm_at" '$3 >= t' "$tmp/user.txt" >"$tmp/user-storm.txt"
echo "real player's logins during the storm: $(wc -l <"$tmp/user-storm.txt") tries; by status: $(awk '{ n[$1]++ } END { for (s in n) printf "%s x%d  ", s, n[s] }' "$tmp/user-storm.txt")"
echo "real player's login seconds during the storm: $(awk '{ printf "%s%s", sep, $2; sep = " " }' "$tmp/user-storm.txt")"
echo "real player's logins before it (the probe alone): $(awk -v n="$(wc -l <"$tmp/user-storm.txt")" 'END { print NR - n }' "$tmp/user.txt") tries; by status: $(awk '{ n[$1]++ } END { for (s in n) printf "%s x%d  ", s, n[s] }' "$tmp/user.txt")(all)"
awk '$1 != 303 { $3 = ""; print "  refused: " $0 }' "$tmp/user.txt"
echo "--- loadtest hol (the probe of / and the storm on /login):"
cat "$tmp/storm.txt"
