#!/usr/bin/env bash
# Pod → dataplane → pod over vhost-user, 64-byte frames, one dataplane core:
# sluiced (routing: lookup, MAC rewrite, TTL, checksum) next to dpdk-testpmd
# io-forwarding between the same two vhost-user ports (no lookup, no rewrite:
# the limit of this path on this machine). Both see the same traffic from the
# same generator (bench/node/pvp_traffic, both pods in one process), so only
# two processes busy-poll on this 2-core machine.
# Throughput here is bimodal between runs (up to 2x), so the two dataplanes
# run interleaved, three rounds each, and the medians and the median of the
# per-round ratios are reported. A benchmark, not a test: it never fails on a figure.
# Usage: bench/node/vhost_pvp.sh [rounds] [seconds] [flows]   (root, after a build)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${BUILD:-$root/build}
rounds=${1:-3}
seconds=${2:-5}
flows=${3:-1}
work=$(mktemp -d /tmp/sluice-pvp.XXXXXX)
source "$root/bench/node/pvp_lib.sh"
trap cleanup EXIT
# NO_BUILD=1 runs the binaries already in $build (e.g. to compare builds).
[[ -n ${NO_BUILD:-} ]] || cmake --build "$build" -j "$(nproc)" --target sluiced sluicectl pvp_traffic >/dev/null

run_testpmd() {
  rm -rf "$work/vhost" && mkdir -p "$work/vhost"
  stdbuf -oL dpdk-testpmd -l 0,1 --no-huge --no-pci -m 1024 --no-shconf --file-prefix="pvp-testpmd-$$" \
    --vdev "net_vhost0,iface=$work/vhost/a.sock,queues=1" --vdev "net_vhost1,iface=$work/vhost/b.sock,queues=1" \
    --log-level=4 -- --no-mlockall --total-num-mbufs=32768 --forward-mode=io --nb-cores=1 -a \
    --record-core-cycles --stats-period 1 >"$work/testpmd.log" 2>&1 &
  dp_pid=$!
  for _ in $(seq 1 300); do [[ -S $work/vhost/b.sock ]] && break; sleep 0.1; done
  local result cpp
  result=$(run_generator "$work/vhost/a.sock" "$work/vhost/b.sock" "02:00:00:00:00:01" "$flows")
  kill -INT "$dp_pid"
  wait "$dp_pid" || true
  dp_pid=
  cpp=$(grep -o "CPU cycles/packet=[0-9.]*" "$work/testpmd.log" | tail -1 | cut -d= -f2)
  echo "$(mpps_of "$result") ${cpp:-?}"
}

printf "%-6s %-28s %-28s %s\n" round "sluiced Mpps (cycles/pkt)" "testpmd io Mpps (cycles/pkt)" "ratio"
s_mpps=() t_mpps=() s_cpp=() t_cpp=() ratios=()
for r in $(seq 1 "$rounds"); do
  read -r sm sc _ < <(run_sluiced "$flows")
  read -r tm tc < <(run_testpmd)
  ratio=$(awk -v a="$sm" -v b="$tm" 'BEGIN {printf "%.3f", (b > 0) ? a / b : 0}')
  printf "%-6s %-28s %-28s %s\n" "$r" "$sm ($sc)" "$tm ($tc)" "$ratio"
  s_mpps+=("$sm") t_mpps+=("$tm") s_cpp+=("$sc") t_cpp+=("$tc") ratios+=("$ratio")
done
echo "median  sluiced $(printf '%s\n' "${s_mpps[@]}" | median) Mpps ($(printf '%s\n' "${s_cpp[@]}" | median) cycles/pkt)," \
  "testpmd io $(printf '%s\n' "${t_mpps[@]}" | median) Mpps ($(printf '%s\n' "${t_cpp[@]}" | median) cycles/pkt)," \
  "ratio sluiced/testpmd $(printf '%s\n' "${ratios[@]}" | median)   [flows=$flows, ${seconds}s per run, 64 B]"
