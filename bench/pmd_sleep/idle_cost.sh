#!/usr/bin/env bash
# What pmd-max-sleep-us buys and costs: for each setting, sluiced with two
# pods' vhost-user ports (client mode, the pods listen; one process plays
# both, wake_latency), first quiet with links up (sluiced's CPU use over that
# spell, from /proc), then single frames after quiet gaps of 1, 10 and 100 ms
# (the first packet's latency through a PMD that may be asleep).
#
# Usage: bench/pmd_sleep/idle_cost.sh [--build DIR] [--sleeps "0 100 1000"]
#          [--samples N] [--quiet-s S] [--out DIR]
# Needs root (EAL). Compare settings within one run: the machine's load moves
# every figure.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$root/build
sleeps="0 100 1000"
samples=100
quiet_s=5
out=
while (($#)); do
  case $1 in
    --build) build=$2; shift 2 ;;
    --sleeps) sleeps=$2; shift 2 ;;
    --samples) samples=$2; shift 2 ;;
    --quiet-s) quiet_s=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "usage: $0 [--build DIR] [--sleeps LIST] [--samples N] [--quiet-s S] [--out DIR]" >&2; exit 2 ;;
  esac
done

cmake --build "$build" -j "$(nproc)" --target sluiced sluicectl wake_latency >/dev/null
work=$(mktemp -d /tmp/sluice-pmd-sleep.XXXXXX)
out=${out:-$work/results}
mkdir -p "$out"
api=$work/api.sock
sluiced_pid=
probe_pid=
ctl() { "$build/dataplane/sluicectl" --socket "$api" --timeout 2000 "$@"; }
stop_all() {
  [[ -n $probe_pid ]] && kill "$probe_pid" 2>/dev/null && wait "$probe_pid" 2>/dev/null
  [[ -n $sluiced_pid ]] && kill -TERM "$sluiced_pid" 2>/dev/null && wait "$sluiced_pid" 2>/dev/null
  probe_pid=
  sluiced_pid=
}
cleanup() {
  stop_all || true
  [[ $out == "$work"/* ]] && cp -r "$out" "/tmp/sluice-pmd-sleep-results.$$" && echo "results: /tmp/sluice-pmd-sleep-results.$$"
  rm -rf "$work"
}
trap cleanup EXIT
wait_until() {  # seconds, command...
  local deadline=$((SECONDS + $1))
  shift
  until "$@"; do
    ((SECONDS < deadline)) || return 1
    sleep 0.02
  done
}
healthy() { ctl health >/dev/null 2>&1; }
# utime + stime of a process, in clock ticks.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

summary=$out/summary.md
{
  echo "# PMD sleep: idle CPU and first-packet latency ($(date -u +%F), $(nproc) cores)"
  echo
  echo "sluiced's CPU while quiet for ${quiet_s} s (links up), and the latency of one frame pod A -> pod B after"
  echo "a quiet gap (${samples} samples per gap). 100 % is one core."
  echo
  echo "| pmd-max-sleep-us | sluiced CPU quiet | gap 1 ms median / p99 µs | gap 10 ms | gap 100 ms |"
  echo "|---:|---:|---:|---:|---:|"
} >"$summary"
hz=$(getconf CLK_TCK)
for max_sleep in $sleeps; do
  rm -rf "$work/vhost" "$work/state"
  "$build/dataplane/sluiced" --api-socket "$api" --socket-dir "$work/vhost" --state-dir "$work/state" \
    --pod-cidr 10.250.0.0/24 --main-core 0 --pmd-cores 1 --pmd-max-sleep-us "$max_sleep" \
    --eal "--no-huge --no-pci -m 1024 --no-shconf --file-prefix=sluice-pmd-sleep-$$" 2>>"$work/sluiced.log" &
  sluiced_pid=$!
  wait_until 60 healthy || { cat "$work/sluiced.log"; exit 1; }
  for pod in a b; do
    ip=10.250.0.1$([[ $pod == a ]] && echo 0 || echo 1)
    ctl port add --container-id "pod-$pod" --ifname net1 --ip "$ip" --mode client --socket-subdir "pod-$pod" >/dev/null
  done
  gateway_mac=$(ctl --json health | sed -n 's/.*"gateway_mac": "\(.*\)".*/\1/p')
  log=$work/wake-$max_sleep.log
  "$build/bench/pmd_sleep/wake_latency" --sock-a "$work/vhost/pod-a/net1.sock" --sock-b "$work/vhost/pod-b/net1.sock" \
    --gateway-mac "$gateway_mac" --samples "$samples" --quiet-s "$quiet_s" >"$log" 2>"$work/wake-$max_sleep.err" &
  probe_pid=$!
  wait_until 120 grep -q '"quiet"' "$log" || { cat "$work/wake-$max_sleep.err"; exit 1; }
  t0=$(date +%s.%N) c0=$(cpu_ticks "$sluiced_pid")
  wait_until 120 grep -q '"quiet_done"' "$log"
  t1=$(date +%s.%N) c1=$(cpu_ticks "$sluiced_pid")
  cpu=$(awk -v c="$((c1 - c0))" -v hz="$hz" -v t="$t0" -v u="$t1" 'BEGIN {printf "%.1f %%", 100 * c / hz / (u - t)}')
  wait "$probe_pid"
  probe_pid=
  cells=$(awk -F'[:,}]' '/"gap_ms"/ {printf "| %s / %s ", $6, $8}' "$log" | sed 's/  */ /g')
  echo "| $max_sleep | $cpu $cells|" >>"$summary"
  cp "$log" "$out/"
  stop_all
done
cat "$summary"
