# scripts/pin.sh: where make loadtest's and make capacity's servers and load generator run (sourced by
# scripts/loadtest.sh and scripts/capacity.sh; scripts/pin_test.go tests it).
#
# On a machine of 2 or more cores the servers run on one core and the load generator on the others (taskset, which
# sets a process's CPU affinity with sched_setaffinity before it starts: every thread of it, the loop's among them,
# stays on those cores, and Go sizes GOMAXPROCS to them), so that the load generator does not take the loop's CPU
# and what a run measures is the server's. The setting, the Make variable CPU (make capacity CPU=...):
#   (empty)  the default: the servers on CPU 0, the load generator on the others; no pinning on 1 core
#   off      no pinning: everything shares every core
#   S        the servers on CPU list S (taskset's form: 1, 0-1, 0,2), the load generator on the other cores
#   S:C      the servers on S, the load generator on C (they may overlap)
# A script runs a command pinned as ${pin_server:+taskset -c "$pin_server"} CMD (exec'd: the same pid).

# pin_parse NAME SPEC CORES: sets pin_server and pin_client, taskset CPU lists (both empty: no pinning), and
# pin_note, what to print, from SPEC on a machine of CORES cores (0 to CORES-1); NAME is the setting's name for the
# messages. A bad SPEC: a message naming NAME on stderr, status 2.
pin_parse() {
  local name=$1 spec=$2 cores=$3 s c
  pin_server= pin_client= pin_note=
  case $spec in
  off)
    pin_note="not pinned ($name=off): the servers and the load generator share the $cores cores"
    return 0
    ;;
  '')
    if [ "$cores" -lt 2 ]; then
      pin_note="not pinned: 1 core, shared by the servers and the load generator"
      return 0
    fi
    s=0
    ;;
  *) s=${spec%%:*} ;;
  esac
  pin_cpus "$name" "$s" "$cores" >/dev/null || return 2
  if [[ $spec == *:* ]]; then
    c=${spec#*:}
    pin_cpus "$name" "$c" "$cores" >/dev/null || return 2
  else
    c=$(pin_others "$(pin_cpus "$name" "$s" "$cores")" "$cores")
    [ -n "$c" ] || { echo "$name=$spec leaves no core for the load generator (this machine has $cores): give S:C or off" >&2; return 2; }
  fi
  if ! command -v taskset >/dev/null; then
    [ -z "$spec" ] || { echo "$name=$spec: no taskset on this machine (util-linux) to pin with" >&2; return 2; }
    pin_note="not pinned: no taskset on this machine (util-linux); the servers and the load generator share the $cores cores"
    return 0
  fi
  pin_server=$s pin_client=$c
  pin_note="pinned (${spec:+$name=$spec; }$name=off turns it off): the servers on CPU $s, the load generator on CPU $c (taskset -c)"
}

# pin_cpus NAME LIST CORES: prints the CPUs of a taskset list, one a line; a list that is not one, or names a CPU
# this machine does not have: a message naming NAME, status 2.
pin_cpus() {
  local name=$1 list=$2 cores=$3 part a b i
  if ! [[ $list =~ ^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*$ ]]; then
    echo "$name must be off, a CPU list such as 0 or 0-1 (the servers'), or SERVERS:LOADGENERATOR such as 0:1, not '$list'" >&2
    return 2
  fi
  for part in ${list//,/ }; do
    a=${part%-*} b=${part#*-}
    if [ "$((10#$a))" -gt "$((10#$b))" ] || [ "$((10#$b))" -ge "$cores" ]; then
      echo "$name: CPU $part is not a CPU or a rising range of this machine's (0 to $((cores - 1)))" >&2
      return 2
    fi
    for ((i = 10#$a; i <= 10#$b; i++)); do echo "$i"; done
  done
}

# pin_others CPUS CORES: the CPUs of 0 to CORES-1 not in CPUS (one a line), as a comma-separated list.
pin_others() {
  local taken=" $(echo "$1" | tr '\n' ' ') " out=() i
  for ((i = 0; i < $2; i++)); do [[ $taken == *" $i "* ]] || out+=("$i"); done
  (IFS=,; echo "${out[*]}")
}

# pin_count LIST: how many CPUs a valid list names (the cores GOMAXPROCS sees); nproc's when LIST is empty.
pin_count() {
  if [ -z "$1" ]; then nproc; else echo $(($(pin_cpus _ "$1" 100000 | wc -l))); fi
}
