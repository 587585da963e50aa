#!/usr/bin/env bash
# The Sluice demo: one node, two pods, real traffic.
#   - builds sluiced and sluicectl (if needed) and starts sluiced without
#     hugepages, its PMD on CPU 1;
#   - plugs in two pods with `sluicectl port add` (the call sluice-cni makes),
#     in vhost-user client mode as sluice-cni's default: the pods create the
#     sockets and sluiced connects to them (and would reconnect after its
#     restart);
#   - runs each pod as a dpdk-testpmd on a net_virtio_user port listening on
#     its socket (server=1): pod B receives, pod A sends 64-byte UDP to pod
#     B's address for a few seconds;
#   - prints what each pod counted and `sluicectl stats`, then removes every
#     process, port and socket it made.
# Both pods share CPU 0 (this machine has two cores and sluiced's PMD owns the
# other), so while pod A runs, pod B cannot drain its ring: sluiced then counts
# the packets B's port refused as tx_queue_full. The demo checks that every
# packet sluiced took from pod A is accounted for: received by B or counted
# as dropped. (Pod A's own count may be higher by the packets still in its
# ring when it exited: its device closes the ring with them.)
# Usage: scripts/demo.sh [seconds]   (run as root, after scripts/setup.sh)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=${1:-5}
work=$(mktemp -d /tmp/sluice-demo.XXXXXX)
api="$work/sluice.sock"
vhost="$work/vhost"
ctl() { "$root/build/dataplane/api/sluicectl" --socket "$api" "$@"; }
pids=()

cleanup() {
  set +e
  for pid in "${pids[@]}"; do kill -INT "$pid" 2>/dev/null; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null; done
  if [[ -n ${sluiced_pid:-} ]]; then
    kill -TERM "$sluiced_pid" 2>/dev/null
    wait "$sluiced_pid" 2>/dev/null
  fi
  rm -rf "$work"
}
trap cleanup EXIT

echo "== building sluiced and sluicectl"
cmake -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$root/build" -j "$(nproc)" --target sluiced sluicectl >/dev/null

echo "== starting sluiced (pod CIDR 10.244.1.0/24, PMD on lcore 1, no hugepages)"
"$root/build/dataplane/sluiced" --api-socket "$api" --socket-dir "$vhost" --state-dir "$work/state" \
  --pod-cidr 10.244.1.0/24 --main-core 0 --pmd-cores 1 \
  --eal "--no-huge --no-pci -m 1024 --no-shconf --file-prefix=sluice-demo-$$" \
  2>"$work/sluiced.log" &
sluiced_pid=$!
for _ in $(seq 1 300); do
  ctl health >/dev/null 2>&1 && break
  kill -0 "$sluiced_pid" 2>/dev/null || { cat "$work/sluiced.log"; exit 1; }
  sleep 0.1
done
ctl health
gateway_mac=$(ctl --json health | sed -n 's/.*"gateway_mac": "\(.*\)".*/\1/p')

echo "== plugging in pod A (10.244.1.10) and pod B (10.244.1.11)"
ctl port add --container-id demo-pod-a --ifname net1 --ip 10.244.1.10 --namespace demo --pod pod-a --socket-subdir pod-a \
  --mode client
ctl port add --container-id demo-pod-b --ifname net1 --ip 10.244.1.11 --namespace demo --pod pod-b --socket-subdir pod-b \
  --mode client

demo_id=$$
# A pod: dpdk-testpmd on a virtio_user port, both its lcores on CPU 0. The
# port creates the socket (server=1) and waits in its probe until sluiced,
# which retries every second, has connected.
testpmd_args() {  # name socket
  echo "--lcores 0@0,1@0 --no-huge --no-pci -m 512 --no-shconf --file-prefix=sluice-demo-$1-$demo_id"
  echo "--vdev net_virtio_user0,path=$2,server=1,queues=1,queue_size=1024 --log-level=4"
  echo "-- --no-mlockall --total-num-mbufs=16384 -a --stats-period 1"
}

echo "== pod B: dpdk-testpmd receiving (rxonly)"
# shellcheck disable=SC2046  # word splitting of the argument list is intended
stdbuf -oL dpdk-testpmd $(testpmd_args pod-b "$vhost/pod-b/net1.sock") --forward-mode=rxonly \
  >"$work/pod-b.log" 2>&1 &
receiver=$!
pids+=("$receiver")
echo "== pod A: dpdk-testpmd sending 64-byte UDP to 10.244.1.11 via gateway $gateway_mac for ${seconds}s"
# shellcheck disable=SC2046
stdbuf -oL dpdk-testpmd $(testpmd_args pod-a "$vhost/pod-a/net1.sock") --forward-mode=txonly \
  --txpkts=64 --tx-ip=10.244.1.10,10.244.1.11 --eth-peer=0,"$gateway_mac" >"$work/pod-a.log" 2>&1 &
sender=$!
pids+=("$sender")
for _ in $(seq 1 100); do
  [[ $(ctl --json ports | grep -c '"link_up": true') == 2 ]] && break
  sleep 0.1
done
echo "== sluicectl ports (both pods connected)"
ctl ports
sleep "$seconds"
# testpmd prints its totals when interrupted.
kill -INT "$sender"
wait "$sender" || true
sleep 0.5  # let the last packets reach pod B before it stops
kill -INT "$receiver"
wait "$receiver" || true
pids=()

sent=$(grep -E "TX-packets:" "$work/pod-a.log" | tail -1 | awk '{print $2}')
received=$(grep -E "RX-packets:" "$work/pod-b.log" | tail -1 | awk '{print $2}')
stats=$(ctl stats)
port_column() { awk -v a="$1" -v c="$2" '/^Ports/ {p = 1} p && $2 == a {print $c}' <<<"$stats"; }
# What sluiced took from pod A's ring: pod A's own count may be higher by
# the frames still in its ring when it exited (its device closes the ring
# with them; no dataplane ever sees those).
taken=$(port_column demo-pod-a/net1 3)
refused_a=$(port_column demo-pod-a/net1 6)
dropped=$(port_column demo-pod-b/net1 5)
echo
echo "== pod A sent ${sent:-?} packets, ${taken:-?} of them taken by sluiced (the rest were still in pod A's ring"
echo "   when it exited); pod B received ${received:-?}; sluiced dropped ${dropped:-?} at pod B's full ring and"
echo "   ${refused_a:-?} of pod A's in its pipeline"
if [[ -n $sent && -n $taken && -n $received && -n $dropped && -n $refused_a &&
      $((received + dropped + refused_a)) -eq $taken && $taken -le $sent ]]; then
  echo "== every packet sluiced took is accounted for: ${received} + ${dropped} + ${refused_a} = ${taken}"
else
  echo "== ACCOUNTING MISMATCH" >&2
  status=1
fi
echo
echo "== sluicectl stats"
ctl stats
echo
echo "== unplugging the pods"
ctl port del --container-id demo-pod-a --ifname net1
ctl port del --container-id demo-pod-b --ifname net1
exit "${status:-0}"
