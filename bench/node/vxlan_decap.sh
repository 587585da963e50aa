#!/bin/bash
# VXLAN decap benchmark: uplink -> local pod at N round-robin flows.
# The uplink is a net_pcap port replaying VXLAN frames forever (infinite_rx),
# the pod a dpdk-testpmd rxonly sink on net_virtio_user; sluiced's PMD cost is
# read as OVS's pmd-perf-show does: busy TSC cycles / packets over the PMD loop
# (`sluicectl stats --json`), after a warm-up. Baseline in the same run: the
# same frames addressed to UDP port 4790, which the uplink stage drops as
# uplink_not_vxlan (pcap rx + classification + free: the harness's floor).
# Prints medians of $rounds runs. Root; two busy-polling processes (sluiced's
# PMD on lcore 1, testpmd's forwarding lcore 0).
# usage: vxlan_decap.sh [build-dir] (env: FLOWS="1 1000 10000", SECONDS_PER_RUN=3, ROUNDS=3)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
flows_list=${FLOWS:-"1 1000 10000"}
seconds=${SECONDS_PER_RUN:-3}
rounds=${ROUNDS:-3}
work=$(mktemp -d /tmp/svxb.XXXXXX)
dp_pid= pod_pid=
cleanup() {
  set +e
  [[ -n $pod_pid ]] && kill -INT "$pod_pid" 2>/dev/null && wait "$pod_pid" 2>/dev/null
  [[ -n $dp_pid ]] && kill -TERM "$dp_pid" 2>/dev/null && wait "$dp_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
ctl() { "$build/dataplane/sluicectl" --socket "$work/api.sock" "$@"; }
median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

run() {  # flows udp-port -> "cycles/packet packets drops"
  local flows=$1 port=$2
  python3 "$root/bench/node/vxlan_pcap.py" "$work/in.pcap" "$flows" "$port"
  cat >"$work/cfg.json" <<J
{"vni": 42, "pod-cidr": "10.250.0.0/24",
 "uplink": {"devargs": "net_pcap0,rx_pcap=$work/in.pcap,tx_pcap=/dev/null,infinite_rx=1", "vtep": "192.168.77.1/24",
            "mac": "02:00:00:00:77:01", "static-neighbors": [{"ip": "192.168.77.2", "mac": "02:00:00:00:77:02"}]},
 "remote-nodes": [{"name": "peer", "vtep": "192.168.77.2", "pod-cidrs": ["10.245.0.0/16"]}]}
J
  rm -rf "$work/vhost" "$work/state"
  "$build/dataplane/sluiced" --config "$work/cfg.json" --api-socket "$work/api.sock" --socket-dir "$work/vhost" \
    --state-dir "$work/state" --main-core 0 --pmd-cores 1 --mbufs 131072 \
    --eal "--no-huge --no-pci -m 2048 --no-shconf --file-prefix=svxb-$$" 2>>"$work/sluiced.log" &
  dp_pid=$!
  for _ in $(seq 1 300); do ctl health >/dev/null 2>&1 && break; sleep 0.1; done
  ctl port add --container-id vxb --ifname net1 --ip 10.250.0.10 --socket-subdir vxb --mode server >/dev/null
  stdbuf -oL dpdk-testpmd -l 0,1 --main-lcore 1 --no-huge --no-pci -m 1024 --no-shconf --file-prefix="svxb-pod-$$" \
    --vdev "net_virtio_user0,path=$work/vhost/vxb/net1.sock" -- --forward-mode=rxonly --total-num-mbufs=32768 \
    --stats-period 1 >"$work/testpmd.log" 2>&1 &
  pod_pid=$!
  for _ in $(seq 1 300); do grep -q "Port statistics" "$work/testpmd.log" && break; sleep 0.1; done
  sleep 1  # warm-up: caches filled, megaflows installed
  ctl stats clear >/dev/null
  sleep "$seconds"
  local json
  json=$(ctl --json stats)
  kill -INT "$pod_pid"; wait "$pod_pid" 2>/dev/null || true; pod_pid=
  kill -TERM "$dp_pid"; wait "$dp_pid" 2>/dev/null || true; dp_pid=
  python3 -c '
import json, sys
s = json.loads(sys.stdin.read())
p = s["pmds"][0]
drops = sum(int(d["packets"]) for d in s["drops"])
print("%.1f %s %d" % (int(p["busy_cycles"]) / max(1, int(p["packets"])), p["packets"], drops))' <<<"$json"
}

printf "%-8s %-26s %-26s\n" flows "decap -> pod (cyc/pkt)" "baseline: drop (cyc/pkt)"
for flows in $flows_list; do
  dec=() base=()
  for _ in $(seq 1 "$rounds"); do
    read -r c _ _ < <(run "$flows" 4789); dec+=("$c")
    read -r c _ _ < <(run "$flows" 4790); base+=("$c")
  done
  printf "%-8s %-26s %-26s\n" "$flows" "$(printf '%s\n' "${dec[@]}" | median)" "$(printf '%s\n' "${base[@]}" | median)"
done
