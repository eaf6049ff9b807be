#!/bin/bash
# scrape-churn.sh: what scraping the metrics endpoint costs the game's clients (issue 29, item 4).
#
# Serves a fresh game (bin/gameserver, loop engine, with -metrics-addr) and probes its front page at
# PROBE_RATE requests a second (open loop, bin/loadtest -rate), ROUNDS times in turn: the probe alone,
# then the probe while CHURN clients reconnect to /metrics as fast as they can (bin/loadtest -c CHURN,
# a new connection per scrape, as ab without -k). Prints the probe's corrected p50 and p99 in each run,
# their medians, the ratio of the p50 medians (churn over alone; the goal is within 1.5x), the scrapes
# served, and the load average before and after. With two or more CPUs, the server runs on CPU 0 and
# the clients on the others (taskset), so the scrapes' own cost lands on the server's side.
#
#   scripts/scrape-churn.sh            # GO=go BIN=bin PROBE_RATE=100 CHURN=50 SECS=10 ROUNDS=3
#
# NOBUILD=1 uses the binaries already in BIN (to compare two builds, one BIN each, in turn).
# Take the heavy lock around it on a shared machine: flock /tmp/heavy.lock scripts/scrape-churn.sh
set -euo pipefail
GO=${GO:-go} BIN=${BIN:-bin} PROBE_RATE=${PROBE_RATE:-100} CHURN=${CHURN:-50} SECS=${SECS:-10} ROUNDS=${ROUNDS:-3}
[ -n "${NOBUILD:-}" ] || $GO build -o "$BIN/" ./cmd/gameserver ./cmd/loadtest
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
server=() client=()
if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
  server=(taskset -c 0) client=(taskset -c "1-$(($(nproc) - 1))")
fi
"${server[@]}" "$BIN/gameserver" -addr 127.0.0.1:0 -metrics-addr 127.0.0.1:0 -db "$tmp/ss.db" 2>"$tmp/log" &
pid=$!
game= metrics=
for _ in $(seq 100); do
  game=$(sed -n 's/.*msg=serving addr=\([0-9.:]*\).*/\1/p' "$tmp/log")
  metrics=$(sed -n 's/.*msg=metrics addr=\([0-9.:]*\).*/\1/p' "$tmp/log")
  [ -n "$game" ] && [ -n "$metrics" ] && break
  sleep 0.1
done
[ -n "$game" ] || { echo "scrape-churn: the server did not start:" >&2; cat "$tmp/log" >&2; exit 1; }
echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg); server ${server[*]:-unpinned}, clients ${client[*]:-unpinned}"
# probe OUT: the probe's run, its report in OUT; prints "p50 p99" (ms, corrected).
probe() {
  "${client[@]}" "$BIN/loadtest" -rate "$PROBE_RATE" -t "$SECS" -warmup 1 "http://$game/" >"$1" 2>/dev/null
  awk '/^  50%/{p50=$2} /^  99%/{p99=$2} END{print p50, p99}' "$1"
}
median() { sort -g | awk '{a[NR]=$1} END{print (NR%2)? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
: >"$tmp/alone" ; : >"$tmp/churn"
for ((r = 1; r <= ROUNDS; r++)); do
  read -r a50 a99 < <(probe "$tmp/alone-$r.txt")
  echo "$a50 $a99" >>"$tmp/alone"
  "${client[@]}" "$BIN/loadtest" -c "$CHURN" -t "$((SECS + 2))" -r "http://$metrics/metrics" >"$tmp/scrapes-$r.txt" 2>/dev/null &
  churn=$!
  sleep 0.5
  read -r c50 c99 < <(probe "$tmp/churn-$r.txt")
  wait "$churn" || true
  echo "$c50 $c99" >>"$tmp/churn"
  scrapes=$(awk '/^Complete requests/{print $3}' "$tmp/scrapes-$r.txt")
  printf 'round %d: probe alone p50 %s ms p99 %s ms; with %d clients reconnecting to /metrics p50 %s ms p99 %s ms (%s scrapes); load %s\n' \
    "$r" "$a50" "$a99" "$CHURN" "$c50" "$c99" "${scrapes:-?}" "$(cut -d' ' -f1-3 /proc/loadavg)"
done
a50=$(awk '{print $1}' "$tmp/alone" | median) c50=$(awk '{print $1}' "$tmp/churn" | median)
a99=$(awk '{print $2}' "$tmp/alone" | median) c99=$(awk '{print $2}' "$tmp/churn" | median)
printf 'median of %d: probe p50 %s ms alone, %s ms under scrape churn (%.2fx; goal <= 1.5x); p99 %s ms, %s ms\n' \
  "$ROUNDS" "$a50" "$c50" "$(echo "scale=4; $c50/$a50" | bc)" "$a99" "$c99"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
