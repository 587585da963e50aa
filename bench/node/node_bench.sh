#!/usr/bin/env bash
# The node benchmark: Sluice and Open vSwitch with DPDK on exactly
# the same packets, one PMD core each, plus the harness floor
# (dpdk-testpmd io-forwarding from the same pcap port to the same null port).
# Traffic: bench/node/node_pcap_gen writes one pcap per scenario and flow
# count (node_traffic.h has the addressing plan); every system replays it
# with net_pcap infinite_rx=1 and sends to net_null no-rx=1 sinks.
#   l3     source pod -> 16 local pods, each in its own /24 (routed: MACs, TTL)
#   l3v6   as l3 over IPv6 (16 dual-stack pods, /128 routes: MACs, hop limit),
#          66-byte frames (the smallest IPv6/UDP frame with the sequence)
#   decap  the same frames VXLAN-encapsulated from 16 remote VTEPs to ours
#   encap  source pod -> 16 remote pod CIDRs, encapsulated toward their VTEPs
#   vhost  pod A -> pod B and back out over vhost-user (PVP-style): the pods
#          are bench/pvp_traffic (virtio_user, N round-robin flows to pod B,
#          64 B) on lcore 0; the floor here is testpmd io-forwarding between
#          the two vhost-user ports (node_lib.sh says why not testpmd flowgen)
# Systems: floor, sluice, ovs (default caches), ovs-smc (smc-enable=true);
# optional: sluice-swoffload (partial offload's software engine marking the
# input port: l3 (the source pod's port) and decap (the uplink: decap
# megaflows as tunnel rules); not a hardware figure: its note carries
# engine=<cycles/packet> the engine spent inside its rx callback, to subtract
# from the PMD's cycles/packet for what the PMD costs when a NIC marks).
# sluice-scraped: sluice with its metrics endpoint on and read once a second
# (curl, as a Prometheus scrape of 1 s would; its note carries scrapes=<n>
# that succeeded during the run), against sluice unscraped in the same rounds.
# sluice-capture: sluice with `sluicectl capture` of the input port running
# (rx, to /dev/null), for what packet capture costs the PMD.
# sluice-nosrcval: sluice with source validation off on every pod port (as
# for a router pod), against sluice with it on (the default) in the same
# rounds: what checking every pod packet's source MAC and IP costs.
# sluice-base: another sluiced binary (--base-sluiced PATH, e.g. one built
# from main before a change) run exactly like sluice, for A/B comparisons.
# Rounds are outermost and the systems interleave within each (scenario, N):
# this machine's throughput is bimodal between runs, so only medians over
# rounds and per-round ratios mean anything. A benchmark: it never fails on
# a figure.
#
# Usage (root, after bash scripts/setup-bench.sh):
#   bench/node/node_bench.sh [--rounds 3] [--seconds 5] [--warmup 2]
#       [--scenarios "l3 l3v6 decap encap vhost"] [--flows "1 100 1000 10000 100000 250000"]
#       [--systems "floor sluice ovs ovs-smc"] [--out DIR] [--build DIR]
#       [--base-sluiced PATH]   (with "sluice-base" in --systems)
#   bench/node/node_bench.sh --smoke [--build DIR]   (1 round, 2 s; l3, 100 flows unless given)
#   --hugepages: every DPDK process on 2 MB hugepages (reserved here for the
#   run, 4 GiB, and given back after), as DPDK is deployed; default: none.
#   --frame-size 64|1514|9000 (the l3 scenario only): 64 on the wire (60
#   bytes in the pcap, the default), or frames of 1514 or 9000 bytes (no
#   FCS: IP packets of 1500 / 8986 bytes). Over 1514 every system's ports
#   get MTU 9216 (sluiced: port-mtu; OVS: mtu_request), and the systems
#   that replay the pcap get buffers that hold the frame whole: net_pcap's
#   infinite_rx copies a preloaded frame's first segment only, so a chained
#   input would arrive cut (sluiced: mbuf-size 9216; testpmd --mbuf-size;
#   OVS sizes its buffers for the MTU). What chained mbufs cost is measured
#   by the vhost path and the tests, not here.
# Exit: 0 every system ran and forwarded what it received; 77 (smoke only)
# the same but OVS is not installed, or --hugepages could not reserve its
# pages; 1 a system failed to run or dropped packets (its note in runs.csv
# says why); 2 usage or missing binaries (or hugepages, outside smoke).
# Results: runs.csv (every run), summary.csv, results.md, <scenario>.png,
# machine.txt and the last run's logs, in --out (default bench/node/results/<UTC time>).
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${BUILD:-$root/build}
rounds=3 seconds=5 warmup=2 smoke=
scenarios="l3 l3v6 decap encap vhost"
flows="1 100 1000 10000 100000 250000"
systems="floor sluice ovs ovs-smc"
out= base_sluiced= huge= scenarios_given= flows_given= frame_size=64
while [[ $# -gt 0 ]]; do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --scenarios) scenarios=$2 scenarios_given=1; shift 2 ;;
    --flows) flows=$2 flows_given=1; shift 2 ;;
    --systems) systems=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --base-sluiced) base_sluiced=$2; shift 2 ;;
    --smoke) smoke=1; shift ;;
    --hugepages) huge=1; shift ;;
    --frame-size) frame_size=$2; shift 2 ;;
    *) echo "node_bench.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
if [[ -n $smoke ]]; then
  rounds=1 seconds=2 warmup=1
  [[ -n $scenarios_given ]] || scenarios=l3
  [[ -n $flows_given ]] || flows=100
fi
case $frame_size in
  64) pcap_frame=60 ;;
  1514|9000) pcap_frame=$frame_size ;;
  *) echo "node_bench.sh: --frame-size must be 64, 1514 or 9000" >&2; exit 2 ;;
esac
if [[ $frame_size != 64 && $scenarios != l3 ]]; then
  echo "node_bench.sh: --frame-size applies to the l3 scenario only (--scenarios l3)" >&2; exit 2
fi
# What the runners give their ports beyond 1514-byte frames (node_lib.sh).
jumbo=
((frame_size > 1514)) && jumbo=1
[[ $EUID -eq 0 ]] || { echo "node_bench.sh: needs root (DPDK, network namespaces)" >&2; exit 2; }
needed=("$build/bench/node/node_pcap_gen" "$build/dataplane/sluiced" "$build/dataplane/sluicectl")
if [[ $systems == *sluice-base* ]]; then
  [[ -n $base_sluiced ]] || { echo "node_bench.sh: sluice-base needs --base-sluiced PATH" >&2; exit 2; }
  needed+=("$base_sluiced")
fi
[[ " $scenarios " == *" vhost "* ]] && needed+=("$build/bench/pvp_traffic")
for b in "${needed[@]}"; do
  [[ -x $b ]] || { echo "node_bench.sh: $b is not built (cmake --build $build --target node_pcap_gen sluiced sluicectl pvp_traffic)" >&2; exit 2; }
done
out=${out:-$root/bench/node/results/$(date -u +%Y%m%d-%H%M%S)}
mkdir -p "$out"
work=$(mktemp -d /tmp/sluice-nodebench.XXXXXX)
source "$root/bench/node/node_lib.sh"
huge_pages_file=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
huge_before=
cleanup() {
  stop_leftovers
  if [[ -n $huge_before ]]; then echo "$huge_before" >"$huge_pages_file"; fi
  rm -rf "$work"
  # EAL leaves an empty runtime directory per file prefix, even with --no-shconf.
  rmdir /var/run/dpdk/"$tag"-* 2>/dev/null
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# --hugepages: enough 2 MB pages for a dataplane (2 GiB) beside the pods
# (512 MiB); the count before the run is restored by cleanup.
if [[ -n $huge ]]; then
  huge_before=$(cat "$huge_pages_file")
  if ((huge_before < 2048)); then echo 2048 >"$huge_pages_file"; fi
  if (($(cat "$huge_pages_file") < 1536)); then
    echo "node_bench.sh: could reserve only $(cat "$huge_pages_file") 2 MB hugepages (need 1536)" >&2
    # The smoke test skips: the machine's memory, not the benchmark, failed.
    exit "$([[ -n $smoke ]] && echo 77 || echo 2)"
  fi
  if ! grep -qs "hugetlbfs" /proc/mounts; then
    mkdir -p /dev/hugepages && mount -t hugetlbfs nodev /dev/hugepages || { echo "node_bench.sh: cannot mount hugetlbfs" >&2; exit 2; }
  fi
fi
plan_load

skipped_ovs=
if [[ $systems == *ovs* ]] && ! ovs_available; then
  echo "SKIP ovs, ovs-smc: Open vSwitch with DPDK is not installed (bash scripts/setup-bench.sh)" >&2
  skipped_ovs=1
fi
command -v dpdk-testpmd >/dev/null || { echo "node_bench.sh: dpdk-testpmd missing (package dpdk)" >&2; exit 2; }

raw="$out/runs.csv"
echo "round,scenario,flows,system,mpps,cycles_per_packet,emc_pct,smc_pct,megaflow_pct,miss_pct,note" >"$raw"
{
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "commit: $(git -C "$root" rev-parse --short HEAD 2>/dev/null)"
  echo "machine: $(nproc) CPUs, $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo), $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), $(uname -r)"
  echo "ovs: $( (ovs-vsctl --version 2>/dev/null || echo none) | head -1), dpdk: $(dpkg-query -W -f '${Version}' dpdk 2>/dev/null)"
  echo "settings: rounds=$rounds seconds=$seconds warmup=$warmup, one PMD (lcore 1; vhost: the pods on lcore 0), $([[ -n $huge ]] && echo "2 MB hugepages" || echo "no hugepages"), $frame_size-byte frames"
} >"$out/machine.txt"

failed=
for ((r = 1; r <= rounds; r++)); do
  for scenario in $scenarios; do
    for n in $flows; do
      if [[ $scenario == vhost ]]; then
        # The pods generate the traffic: the runners take the flow count.
        pcap=$n packets=0
      else
        pcap="$work/$scenario-$n-$pcap_frame.pcap"
        frame_args=()
        [[ $pcap_frame != 60 ]] && frame_args=(--frame-size "$pcap_frame")
        [[ -f $pcap ]] || "$gen" --scenario "$scenario" --flows "$n" "${frame_args[@]}" --out "$pcap" \
          2>>"$work/gen.log" || exit 1
        packets=$(( ( (1024 + n - 1) / n) * n ))
      fi
      for system in $systems; do
        t0=$EPOCHREALTIME
        case $system in
          floor) if [[ $scenario == vhost ]]; then line=$(run_floor_vhost "$n")
                 else line=$(run_floor "$scenario" "$pcap" "$packets"); fi ;;
          sluice) line=$(run_sluice "$scenario" "$pcap" "$packets") ;;
          sluice-swoffload) line=$(run_sluice "$scenario" "$pcap" "$packets" software) ;;
          sluice-base) line=$(sluiced=$base_sluiced run_sluice "$scenario" "$pcap" "$packets") ;;
          sluice-scraped) line=$(metrics_scrape=1 run_sluice "$scenario" "$pcap" "$packets") ;;
          sluice-capture) line=$(capture=1 run_sluice "$scenario" "$pcap" "$packets") ;;
          sluice-nosrcval) line=$(no_source_validation=1 run_sluice "$scenario" "$pcap" "$packets") ;;
          ovs) line=$(run_ovs "$scenario" "$pcap" "$packets" false) ;;
          ovs-smc) line=$(run_ovs "$scenario" "$pcap" "$packets" true) ;;
          *) echo "node_bench.sh: unknown system $system" >&2; exit 2 ;;
        esac
        read -r mpps cpp emc smc mf miss note <<<"$line"
        took=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
        echo "round $r  $scenario  flows $n  $system: $mpps Mpps, $cpp cycles/pkt  (emc $emc smc $smc megaflow $mf miss $miss; $note) [${took} s]" >&2
        echo "$r,$scenario,$n,$system,$mpps,$cpp,$emc,$smc,$mf,$miss,$note" >>"$raw"
        # A system that did not run, or dropped what it should have forwarded
        # (a configuration error, not a slow run), fails the benchmark.
        if [[ $mpps == - && $note != ovs-not-installed && $note != skipped:* ]] || [[ $note == *drops=* || $note == *lost=* ]]; then
          failed=1
        fi
      done
    done
  done
done
# Logs of the last runs, for when a figure looks wrong.
cp "$work"/*.log "$work"/*.txt "$work"/ovs/ovs-vswitchd.log "$out/" 2>/dev/null || true
bash "$root/bench/node/node_report.sh" "$out"
echo "results: $out" >&2
if [[ -n $failed ]]; then exit 1; fi
if [[ -n $smoke && -n $skipped_ovs ]]; then exit 77; fi
exit 0
