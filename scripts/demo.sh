#!/usr/bin/env bash
# The Sluice demo: one node, two pods, real traffic.
#   - builds sluiced and sluicectl (if needed) and starts sluiced without
#     hugepages, its PMD on CPU 1;
#   - plugs in two pods with `sluicectl port add` (the call sluice-cni makes),
#     in vhost-user client mode as sluice-cni's default: the pods create the
#     sockets and sluiced connects to them (and would reconnect after its
#     restart);
#   - runs each pod as a dpdk-testpmd on a net_virtio_user port listening on
#     its socket (server=1), with the MAC sluiced gave the port (as a CNI
#     result hands it to the pod): sluiced checks every pod's source MAC and
#     address and drops what another pod could not have sent;
#   - pod B receives; pod A sends 64-byte UDP to pod B's address in rounds
#     of 512 packets, one after the other, for a few seconds;
#   - prints what each pod counted and `sluicectl stats`, then removes every
#     process, port and socket it made.
# Both pods share CPU 0 (this machine has two cores and sluiced's PMD owns the
# other). An unpaced sender would fill pod B's ring whenever the scheduler
# runs pod A instead of pod B; a round of 512 fits in B's ring of 1024, so
# what sluiced forwards arrives.
# Exits non-zero when pod B receives nothing, when sluiced counts a drop for
# any reason other than pod B's full ring, or when the packets sluiced took
# from pod A do not add up to what it delivered and dropped.
# Usage: scripts/demo.sh [seconds]   (run as root, after scripts/setup.sh)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=${1:-5}
work=$(mktemp -d /tmp/sluice-demo.XXXXXX)
api="$work/sluice.sock"
vhost="$work/vhost"
ctl() { "$root/build/dataplane/sluicectl" --socket "$api" "$@"; }
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
fail() {
  echo "== DEMO FAILED: $*" >&2
  exit 1
}
# Waits up to $1 seconds for the command that follows to succeed.
wait_until() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@"; do
    ((SECONDS < deadline)) || return 1
    sleep 0.1
  done
}

echo "== building sluiced and sluicectl"
cmake -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$root/build" -j "$(nproc)" --target sluiced sluicectl >/dev/null

echo "== starting sluiced (pod CIDR 10.244.1.0/24, PMD on lcore 1, no hugepages)"
"$root/build/dataplane/sluiced" --api-socket "$api" --socket-dir "$vhost" --state-dir "$work/state" \
  --pod-cidr 10.244.1.0/24 --main-core 0 --pmd-cores 1 \
  --eal "--no-huge --no-pci -m 1024 --no-shconf --file-prefix=sluice-demo-$$" \
  2>"$work/sluiced.log" &
sluiced_pid=$!
sluiced_answers() {
  kill -0 "$sluiced_pid" 2>/dev/null || fail "sluiced exited: $(cat "$work/sluiced.log")"
  ctl health >/dev/null 2>&1
}
wait_until 30 sluiced_answers || fail "sluiced did not answer within 30 s: $(tail -5 "$work/sluiced.log")"
ctl health
# One JSON field of stdin, by a dotted path (python3 is in scripts/setup.sh).
json_field() { python3 -c 'import json, sys
v = json.load(sys.stdin)
for k in sys.argv[1].split("."): v = v[k]
print(v)' "$1"; }
gateway_mac=$(ctl --json health | json_field gateway_mac)

echo "== plugging in pod A (10.244.1.10) and pod B (10.244.1.11)"
add_pod() {  # name ip -> the MAC sluiced gave the port
  ctl --json port add --container-id "demo-$1" --ifname net1 --ip "$2" --namespace demo --pod "$1" \
    --socket-subdir "$1" --mode client | json_field port.mac
}
mac_a=$(add_pod pod-a 10.244.1.10)
mac_b=$(add_pod pod-b 10.244.1.11)
echo "   pod A's port: MAC $mac_a; pod B's port: MAC $mac_b; gateway $gateway_mac"

demo_id=$$
# A pod: dpdk-testpmd on a virtio_user port with the port's MAC, both its
# lcores on CPU 0, commands on a pipe. The port creates the socket (server=1)
# and waits in its probe until sluiced, which retries every second, connects.
start_pod() {  # name mac forward-mode testpmd-args...
  local name=$1 mac=$2 mode=$3
  shift 3
  mkfifo "$work/$name.in"
  stdbuf -oL dpdk-testpmd --lcores 0@0,1@0 --no-huge --no-pci -m 512 --no-shconf \
    --file-prefix="sluice-demo-$name-$demo_id" --log-level=4 \
    --vdev "net_virtio_user0,path=$vhost/$name/net1.sock,server=1,mac=$mac,queues=1,queue_size=1024" \
    -- -i --no-mlockall --total-num-mbufs=16384 --forward-mode="$mode" "$@" \
    <"$work/$name.in" >"$work/$name.log" 2>&1 &
  pids+=($!)
}
start_pod pod-b "$mac_b" rxonly
exec {to_b}>"$work/pod-b.in"
start_pod pod-a "$mac_a" io --txpkts=64 --tx-ip=10.244.1.10,10.244.1.11 --eth-peer=0,"$gateway_mac"
exec {to_a}>"$work/pod-a.in"
both_links_up() { [[ $(ctl --json ports | grep -c '"link_up": true') == 2 ]]; }
wait_until 30 both_links_up || fail "sluiced did not connect to both pods: $(ctl ports)"
echo "== sluicectl ports (both pods connected)"
ctl ports
ctl stats clear >/dev/null

echo "== pod B: dpdk-testpmd receiving (rxonly)"
echo start >&"$to_b"
echo "== pod A: dpdk-testpmd sending 64-byte UDP to 10.244.1.11 from $mac_a, 512 per round, for ${seconds}s"
# `start tx_first 16` sends 16 bursts of 32 from testpmd's UDP template, then
# forwards what pod A receives (nothing) until `stop`.
# Each round ends with `stop`'s "Done."; the next starts once it has, so pod A
# runs no more often than its own round trips allow.
rounds=0
rounds_done() { (($(grep -cF "Done." "$work/pod-a.log" || true) >= rounds)); }
end=$((SECONDS + seconds))
while ((SECONDS < end)); do
  printf 'start tx_first 16\nstop\n' >&"$to_a"
  rounds=$((rounds + 1))
  for _ in $(seq 1 2000); do
    rounds_done && break
    sleep 0.005
  done
  rounds_done || fail "pod A's testpmd did not finish round $rounds: $(tail -5 "$work/pod-a.log")"
done

# What sluiced took from pod A, delivered to pod B and dropped, per port.
port_stats() {  # container-id -> "rx tx tx_dropped rx_dropped"
  ctl --json stats | python3 -c 'import json, sys
for p in json.load(sys.stdin).get("ports", []):
    if p["attachment"]["container_id"] == sys.argv[1]:
        print(*(int(p.get(f, 0)) for f in ("rx_packets", "tx_packets", "tx_dropped", "rx_dropped")))' "$1"
}
# sluiced has taken all pod A sent once its count stops moving.
a_settled() {
  local now
  now=$(port_stats demo-pod-a)
  [[ $now == "${last_a:-}" ]] && return 0
  last_a=$now
  return 1
}
wait_until 10 a_settled || true
read -r taken _ _ refused_a <<<"$(port_stats demo-pod-a)"
read -r _ delivered dropped _ <<<"$(port_stats demo-pod-b)"

# A pod's own count: its testpmd's port statistics since it started.
pod_count() {  # name RX-packets|TX-packets
  local fd="to_${1//pod-/}" off
  off=$(stat -c %s "$work/$1.log")
  echo "show port stats 0" >&"${!fd}"
  printed() { tail -c +$((off + 1)) "$work/$1.log" | grep -q "Tx-pps"; }
  wait_until 10 printed "$1" || return 1
  tail -c +$((off + 1)) "$work/$1.log" | awk -v f="$2:" '$1 == f {print $2; exit}'
}
sent=$(pod_count pod-a TX-packets) || fail "pod A's testpmd printed no statistics: $(tail -5 "$work/pod-a.log")"
# Pod B has taken from its ring all that sluiced put there once it counts
# as many as sluiced delivered.
b_has_all() { received=$(pod_count pod-b RX-packets) && ((received >= delivered)); }
wait_until 20 b_has_all || true

stats=$(ctl stats)
echo
echo "== pod A sent ${sent} packets in ${rounds} rounds; sluiced took ${taken} of them and delivered ${delivered} to"
echo "   pod B's ring (${dropped} dropped there, ring full); pod B received ${received:-?}"
echo
echo "== sluicectl stats"
echo "$stats"
echo
echo "== unplugging the pods"
echo quit >&"$to_a"
echo quit >&"$to_b"
ctl port del --container-id demo-pod-a --ifname net1
ctl port del --container-id demo-pod-b --ifname net1

# The verdict, after the evidence is printed.
((${received:-0} > 0)) || fail "pod B received nothing (see the drops by reason above)"
other_drops=$(awk '/^Drops by reason/ {d = 1; next} d && NF == 0 {d = 0} d && $1 != "tx_queue_full" && $2 > 0' <<<"$stats")
[[ -z $other_drops ]] || fail "sluiced dropped packets for reasons other than pod B's full ring: $other_drops"
((delivered + dropped + refused_a == taken)) ||
  fail "sluiced took ${taken} from pod A but delivered ${delivered}, dropped ${dropped} at B and ${refused_a} in its pipeline"
((sent > 0 && taken <= sent)) || fail "sluiced took ${taken} from pod A, which sent only ${sent}"
percent=$((100 * received / sent))
if ((percent >= 50)); then
  echo "== Sluice forwarded: ${received} of the ${sent} packets pod A sent arrived at pod B (${percent} %)"
else
  echo "== pod B received ${percent} % of what pod A sent: both pods share CPU 0 here, and pod B's ring fills" \
    "while the scheduler runs pod A (${dropped} counted as tx_queue_full)"
fi
