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
gen="$build/bench/pvp_traffic"
ctl() { "$build/dataplane/api/sluicectl" --socket "$work/api.sock" "$@"; }
dp_pid=

cleanup() {
  set +e
  [[ -n $dp_pid ]] && kill -INT "$dp_pid" 2>/dev/null && wait "$dp_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
cmake --build "$build" -j "$(nproc)" --target sluiced sluicectl pvp_traffic >/dev/null

run_generator() {  # socket-a socket-b gateway-mac → JSON line
  "$gen" --sock-a "$1" --sock-b "$2" --gateway-mac "$3" --seconds "$seconds" --warmup 1 --flows "$flows" \
    2>>"$work/gen.log" | tail -1
}

run_sluiced() {
  rm -rf "$work/vhost"
  "$build/dataplane/sluiced" --api-socket "$work/api.sock" --socket-dir "$work/vhost" \
    --pod-cidr 10.250.0.0/24 --main-core 0 --pmd-cores 1 \
    --eal "--no-huge --no-pci -m 1024 --no-shconf --file-prefix=pvp-sluiced-$$" 2>>"$work/sluiced.log" &
  dp_pid=$!
  for _ in $(seq 1 300); do ctl health >/dev/null 2>&1 && break; sleep 0.1; done
  ctl port add --container-id pvp-a --ifname net1 --ip 10.250.0.10 >/dev/null
  ctl port add --container-id pvp-b --ifname net1 --ip 10.250.0.11 >/dev/null
  local mac
  mac=$(ctl --json health | sed -n 's/.*"gateway_mac": "\(.*\)".*/\1/p')
  ctl stats clear >/dev/null
  local result cpp
  result=$(run_generator "$work/vhost/pvp-a-net1.sock" "$work/vhost/pvp-b-net1.sock" "$mac")
  # Cycles per packet over the whole run (warm-up included), as sluicectl shows it.
  cpp=$(ctl stats | awk '/cycles per packet/ {print $4; exit}')
  kill -TERM "$dp_pid"
  wait "$dp_pid" || true
  dp_pid=
  echo "$(sed -n 's/.*"rx_mpps": \([0-9.]*\).*/\1/p' <<<"$result") $cpp"
}

run_testpmd() {
  rm -rf "$work/vhost" && mkdir -p "$work/vhost"
  stdbuf -oL dpdk-testpmd -l 0,1 --no-huge --no-pci -m 1024 --no-shconf --file-prefix="pvp-testpmd-$$" \
    --vdev "net_vhost0,iface=$work/vhost/a.sock,queues=1" --vdev "net_vhost1,iface=$work/vhost/b.sock,queues=1" \
    --log-level=4 -- --no-mlockall --total-num-mbufs=32768 --forward-mode=io --nb-cores=1 -a \
    --record-core-cycles --stats-period 1 >"$work/testpmd.log" 2>&1 &
  dp_pid=$!
  for _ in $(seq 1 300); do [[ -S $work/vhost/b.sock ]] && break; sleep 0.1; done
  local result cpp
  result=$(run_generator "$work/vhost/a.sock" "$work/vhost/b.sock" "02:00:00:00:00:01")
  kill -INT "$dp_pid"
  wait "$dp_pid" || true
  dp_pid=
  cpp=$(grep -o "CPU cycles/packet=[0-9.]*" "$work/testpmd.log" | tail -1 | cut -d= -f2)
  echo "$(sed -n 's/.*"rx_mpps": \([0-9.]*\).*/\1/p' <<<"$result") ${cpp:-?}"
}

median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

printf "%-6s %-28s %-28s %s\n" round "sluiced Mpps (cycles/pkt)" "testpmd io Mpps (cycles/pkt)" "ratio"
s_mpps=() t_mpps=() s_cpp=() t_cpp=() ratios=()
for r in $(seq 1 "$rounds"); do
  read -r sm sc < <(run_sluiced)
  read -r tm tc < <(run_testpmd)
  ratio=$(awk -v a="$sm" -v b="$tm" 'BEGIN {printf "%.3f", (b > 0) ? a / b : 0}')
  printf "%-6s %-28s %-28s %s\n" "$r" "$sm ($sc)" "$tm ($tc)" "$ratio"
  s_mpps+=("$sm") t_mpps+=("$tm") s_cpp+=("$sc") t_cpp+=("$tc") ratios+=("$ratio")
done
echo "median  sluiced $(printf '%s\n' "${s_mpps[@]}" | median) Mpps ($(printf '%s\n' "${s_cpp[@]}" | median) cycles/pkt)," \
  "testpmd io $(printf '%s\n' "${t_mpps[@]}" | median) Mpps ($(printf '%s\n' "${t_cpp[@]}" | median) cycles/pkt)," \
  "ratio sluiced/testpmd $(printf '%s\n' "${ratios[@]}" | median)   [flows=$flows, ${seconds}s per run, 64 B]"
