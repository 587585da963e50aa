#!/bin/bash
# VXLAN encap benchmark: local pod -> remote node at N round-robin
# flows. The pod is dpdk-testpmd in flowgen mode on net_virtio_user (N
# destination addresses in the remote node's pod CIDR), the uplink a net_null
# sink (no rx); sluiced's PMD cost is busy TSC cycles / packets over the PMD
# loop (`sluicectl stats --json`), after a warm-up. Baseline in the same run:
# the same traffic with the remote node owning another CIDR (vhost rx, lookup, drop
# no_route). Medians of $rounds. Root; two busy-polling processes.
# usage: vxlan_encap.sh [build-dir] (env: FLOWS="1 1000", SECONDS_PER_RUN=3, ROUNDS=3)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
flows_list=${FLOWS:-"1 1000"}
seconds=${SECONDS_PER_RUN:-3}
rounds=${ROUNDS:-3}
work=$(mktemp -d /tmp/svxe.XXXXXX)
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

run() {  # flows remote-pod-cidr -> "cycles/packet packets tunnel-tx"
  local flows=$1 cidr=$2
  cat >"$work/cfg.json" <<J
{"vni": 42, "pod-cidr": "10.250.0.0/24",
 "uplink": {"devargs": "net_null0,no-rx=1", "vtep": "192.168.77.1/24", "mac": "02:00:00:00:77:01",
            "static-neighbors": [{"ip": "192.168.77.2", "mac": "02:00:00:00:77:02"}]},
 "remote-nodes": [{"name": "peer", "vtep": "192.168.77.2", "pod-cidrs": ["$cidr"]}]}
J
  rm -rf "$work/vhost" "$work/state"
  "$build/dataplane/sluiced" --config "$work/cfg.json" --api-socket "$work/api.sock" --socket-dir "$work/vhost" \
    --state-dir "$work/state" --main-core 0 --pmd-cores 1 \
    --eal "--no-huge --no-pci -m 1024 --no-shconf --file-prefix=svxe-$$" 2>>"$work/sluiced.log" &
  dp_pid=$!
  for _ in $(seq 1 300); do ctl health >/dev/null 2>&1 && break; sleep 0.1; done
  # testpmd's flowgen sends from its own source addresses, not the pod's:
  # the port's sources are not checked (as a router pod's).
  ctl port add --container-id vxe --ifname net1 --ip 10.250.0.10 --socket-subdir vxe --mode server \
    --no-source-validation >/dev/null
  local gwmac
  gwmac=$(ctl --json health | sed -n 's/.*"gateway_mac": "\(.*\)".*/\1/p')
  stdbuf -oL dpdk-testpmd -l 0,1 --main-lcore 1 --no-huge --no-pci -m 1024 --no-shconf --file-prefix="svxe-pod-$$" \
    --vdev "net_virtio_user0,path=$work/vhost/vxe/net1.sock,mac=02:fa:0a:fa:00:0a" -- --forward-mode=flowgen \
    --flowgen-flows="$flows" --eth-peer="0,$gwmac" --txpkts=64 \
    --total-num-mbufs=32768 --stats-period 1 >"$work/testpmd.log" 2>&1 &
  pod_pid=$!
  for _ in $(seq 1 300); do grep -q "Port statistics" "$work/testpmd.log" && break; sleep 0.1; done
  sleep 1
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
tx = sum(int(t.get("tx_packets", 0)) for t in s.get("tunnels", []))
top = sorted(((int(d.get("packets", 0)), d["reason"]) for d in s["drops"]), reverse=True)[:2]
print("drops: %s" % top, file=sys.stderr)
print("%.1f %s %d" % (int(p["busy_cycles"]) / max(1, int(p["packets"])), p["packets"], tx))' <<<"$json"
}

printf "%-8s %-30s %-30s\n" flows "encap -> uplink (cyc/pkt)" "baseline: no_route (cyc/pkt)"
for flows in $flows_list; do
  enc=() base=()
  for _ in $(seq 1 "$rounds"); do
    read -r c p t < <(run "$flows" 10.253.0.0/16); enc+=("$c")
    echo "  encap run: $p packets, $t encapsulated" >&2
    read -r c _ _ < <(run "$flows" 10.245.0.0/16); base+=("$c")
  done
  printf "%-8s %-30s %-30s\n" "$flows" "$(printf '%s\n' "${enc[@]}" | median)" "$(printf '%s\n' "${base[@]}" | median)"
done
