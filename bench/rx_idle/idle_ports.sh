#!/usr/bin/env bash
# What idle pod ports cost the busy ones: sluiced (one PMD) forwards pod A ->
# pod B over vhost-user (bench/pvp_traffic plays both pods, 64-byte frames,
# round-robin flows) while N more vhost-user ports are attached, connected and
# silent: their pods are dpdk-testpmd processes in interactive mode (stdin
# held open, forwarding never started), each holding up to --per-pod ports
# as virtio_user devices. Reported per system and N: the generator's Mpps,
# sluiced's cycles per packet (busy cycles / packets: the idle ports' empty
# polls in busy iterations count there) and its ratio to N = 0 of the same
# system in the same round; for a sluiced that polls idle queues in turn,
# also its idle polls made and left out per 32 packets forwarded. Pod B only
# receives, so its rx queue is idle too (N = 0 has one idle queue).
# Rounds are outermost, N and the systems interleave within each: this
# machine's throughput is bimodal between runs, so only per-round ratios and
# medians over rounds mean anything. A benchmark: it never fails on a figure.
#
# Usage (root, after building sluiced, sluicectl and pvp_traffic):
#   bench/rx_idle/idle_ports.sh [--idle "0 10 28"] [--rounds 3] [--seconds 5]
#       [--systems "new=build/dataplane/sluiced base=/path/to/sluiced"]
#       [--flows 16] [--per-pod 28] [--max-ports N] [--build DIR] [--out DIR]
#       [--queues Q] [--latency [--sleep-us 0] [--samples 50]]
# --queues Q: every idle port has Q queue pairs (sluiced's max-queues-per-
# port is raised to Q; virtio_user allows 8), all enabled by its pod (testpmd --rxq/--txq Q): the
# PMD polls N x Q idle rx queues. This is how hundreds of idle queues can be
# measured while pod ports were ethdevs (28 x 8 = 224); a queue of a
# multi-queue port costs an empty poll like a single-queue port's.
# --latency: instead of throughput, the first packet's latency after quiet
# gaps of 10 and 100 ms (bench/pmd_sleep/wake_latency: pods A and B in one
# process, their ports in client mode) beside the N idle ports: pod A's
# queue has turned idle by then, so the figure includes waiting for its turn,
# on a node otherwise quiet (pmd-max-sleep-us --sleep-us).
# N is bounded by sluiced's max-ports less the two busy pods (and, while pod
# ports are net_vhost ethdevs, under offload-port, by DPDK's 32: 28). --max-ports is passed to
# sluiced when given, for N in the hundreds.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${BUILD:-$root/build}
idle_counts="0 10 28" rounds=3 seconds=5 flows=16 per_pod=28 max_ports= out= systems=
latency= sleep_us=0 samples=50 queues=1
while [[ $# -gt 0 ]]; do
  case $1 in
    --idle) idle_counts=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --systems) systems=$2; shift 2 ;;
    --flows) flows=$2; shift 2 ;;
    --per-pod) per_pod=$2; shift 2 ;;
    --max-ports) max_ports=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --latency) latency=1; shift ;;
    --queues) queues=$2; shift 2 ;;
    --sleep-us) sleep_us=$2; shift 2 ;;
    --samples) samples=$2; shift 2 ;;
    *) echo "idle_ports.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
systems=${systems:-new=$build/dataplane/sluiced}
[[ $EUID -eq 0 ]] || { echo "idle_ports.sh: needs root (DPDK)" >&2; exit 2; }
command -v dpdk-testpmd >/dev/null || { echo "idle_ports.sh: dpdk-testpmd missing (package dpdk)" >&2; exit 2; }
for b in "$build/dataplane/sluicectl" "$build/bench/pvp_traffic" "$build/bench/pmd_sleep/wake_latency"; do
  [[ -x $b ]] || { echo "idle_ports.sh: $b is not built" >&2; exit 2; }
done
for s in $systems; do
  [[ -x ${s#*=} ]] || { echo "idle_ports.sh: ${s#*=} (system ${s%%=*}) is not executable" >&2; exit 2; }
done
out=${out:-$root/bench/rx_idle/results/$(date -u +%Y%m%d-%H%M%S)}
mkdir -p "$out"
work=$(mktemp -d /tmp/sluice-idleports.XXXXXX)
tag=idleports-$$
# The dataplane, the traffic pods and sluicectl run each in a session of their own
# (with the kernel's autogroup scheduling, Debian's default, a session is
# one scheduling group) whose group nice is -20: on this shared 2-core
# machine, builds running beside the benchmark would otherwise preempt the
# PMD and the generator often enough to make every figure noise. Both
# systems under comparison get the same.
# The group is set from inside the new session, then the program execs in
# its place (setsid execs in place too: a script's job leads no process
# group), so a background job's $! is the program's pid.
boosted() { setsid sh -c 'echo -20 >"/proc/$$/autogroup" 2>/dev/null; exec "$0" "$@"' "$@"; }
ctl() { boosted "$build/dataplane/sluicectl" --socket "$work/api.sock" --timeout 5000 "$@"; }
dp_pid= idle_pids=() idle_fds=() failed=

stop_pods() {
  local p fd i
  for p in "${idle_pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
  # A testpmd at its prompt sometimes misses the signal: killed after 5 s
  # (it holds no hugepage files, and sluiced sees its sockets close).
  for p in "${idle_pids[@]}"; do
    for ((i = 0; i < 50; i++)); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null
    wait "$p" 2>/dev/null
  done
  for fd in "${idle_fds[@]}"; do exec {fd}>&-; done
  idle_pids=() idle_fds=()
}
stop_sluiced() {
  [[ -n $dp_pid ]] && kill -TERM "$dp_pid" 2>/dev/null && wait "$dp_pid" 2>/dev/null
  dp_pid=
}
cleanup() {
  stop_sluiced
  stop_pods
  rm -rf "$work"
  rmdir /var/run/dpdk/"$tag"-* 2>/dev/null
}
trap cleanup EXIT
trap 'exit 130' INT TERM
wait_until() {  # seconds, command...
  local deadline=$((SECONDS + $1))
  shift
  until "$@"; do
    ((SECONDS < deadline)) || return 1
    sleep 0.1
  done
}
ports_up() { (($(ctl ports 2>/dev/null | grep -c ' up ') >= $1)); }
# Idle pod k: 10.250.(1 + k / 200).(10 + k % 200).
idle_ip() { echo "10.250.$((1 + $1 / 200)).$((10 + $1 % 200))"; }

# One pod process holding idle ports [first, first + count): ports started
# (their queues set up, as a pod's driver does) and nothing sent.
start_idle_pod() {  # first count
  local first=$1 count=$2 k vdevs=() fifo=$work/pod-$1.in
  for ((k = first; k < first + count; k++)); do
    vdevs+=(--vdev "net_virtio_user$k,path=$work/vhost/idle-$k/net1.sock,queues=$queues,queue_size=256$( ((queues > 1)) && echo ,cq=1)")
  done
  rm -f "$fifo"
  mkfifo "$fifo"
  # Lcore 1 only because testpmd wants a forwarding core (forwarding never
  # starts), on CPU 0 with the rest: CPU 1 is the PMD's, boosted, and a
  # pod thread there would barely run (testpmd then takes minutes to exit).
  dpdk-testpmd --lcores 0,1@0 --no-huge --no-pci -m 512 --no-shconf --file-prefix="$tag-pod$first" --log-level=4 \
    "${vdevs[@]}" -- -i --nb-cores=1 --rxq="$queues" --txq="$queues" --no-mlockall \
    --total-num-mbufs=$((count * queues * 600 + 2048)) \
    <"$fifo" >"$work/pod-$first.log" 2>&1 &
  idle_pids+=($!)
  local fd
  exec {fd}>"$fifo"  # stdin held open: testpmd waits at its prompt
  idle_fds+=("$fd")
}

# One run → "mpps cycles/pkt packets/burst idle-polls skipped revisit-µs" (polls
# per 32 packets forwarded; the mean interval between two polls of an idle queue).
# sluiced with pods A and B (vhost-user mode $3) and n idle ports whose pods
# are up; returns 1 when something failed, with why in $failed.
start_node() {  # sluiced-binary idle-count mode
  local sluiced=$1 n=$2 mode=$3 k extra=()
  rm -rf "$work/vhost" "$work/state"
  [[ -n $max_ports ]] && extra=(--max-ports "$max_ports")
  ((queues > 1)) && extra+=(--max-queues-per-port "$queues")
  setsid sh -c 'echo -20 >"/proc/$$/autogroup" 2>/dev/null; exec "$0" "$@"' "$sluiced" --api-socket "$work/api.sock" --socket-dir "$work/vhost" --state-dir "$work/state" \
    --pod-cidr 10.250.0.0/16 --main-core 0 --pmd-cores 1 --pmd-max-sleep-us "$sleep_us" "${extra[@]}" \
    --eal "--no-huge --no-pci -m 1024 --no-shconf --file-prefix=$tag-sluiced" 2>>"$work/sluiced.log" &
  dp_pid=$!
  wait_until 60 ctl health >/dev/null 2>&1 || { failed="sluiced-did-not-start"; return 1; }
  ctl port add --container-id pvp-a --ifname net1 --ip 10.250.0.10 --socket-subdir pvp-a --mode "$mode" >/dev/null &&
    ctl port add --container-id pvp-b --ifname net1 --ip 10.250.0.11 --socket-subdir pvp-b --mode "$mode" >/dev/null ||
    { failed="busy-ports-not-added"; stop_sluiced; return 1; }
  for ((k = 0; k < n; k++)); do
    ctl port add --container-id "idle-$k" --ifname net1 --ip "$(idle_ip "$k")" --socket-subdir "idle-$k" \
      --queues "$queues" --mode server >/dev/null || { failed="idle-port-$k-not-added"; stop_sluiced; return 1; }
  done
  for ((k = 0; k < n; k += per_pod)); do start_idle_pod "$k" $((n - k < per_pod ? n - k : per_pod)); done
  if ! wait_until 120 ports_up "$n"; then
    failed="idle-links-not-up"
    stop_pods
    stop_sluiced
    return 1
  fi
}

# One latency run → "gap10-median gap10-p99 gap10-max gap100-median gap100-p99 gap100-max" (µs).
run_latency() {  # sluiced-binary idle-count
  local why
  start_node "$1" "$2" client </dev/null >/dev/null || { echo "- - - - - - $failed"; return; }
  local mac log=$work/wake.log
  mac=$(ctl --json health | sed -n 's/.*"gateway_mac": "\(.*\)".*/\1/p')
  boosted "$build/bench/pmd_sleep/wake_latency" --sock-a "$work/vhost/pvp-a/net1.sock" --sock-b "$work/vhost/pvp-b/net1.sock" \
    --gateway-mac "$mac" --samples "$samples" --quiet-s 1 --gaps-ms 10,100 >"$log" 2>>"$work/wake.err"
  stop_sluiced
  stop_pods
  awk -F'[:,}]' '/"gap_ms"/ { printf "%s %s %s ", $6, $8, $10 } END { print "" }' "$log" | sed 's/  */ /g'
}

# One throughput run.
run_one() {  # sluiced-binary idle-count
  local n=$2
  start_node "$1" "$2" server </dev/null >/dev/null || { echo "- - - - - - $failed"; return; }
  local mac result stats
  mac=$(ctl --json health | sed -n 's/.*"gateway_mac": "\(.*\)".*/\1/p')
  # Counters from just before the pods start: the generator's warm-up
  # second is in them (its first packets' upcalls among millions). Cleared
  # here rather than by a timer during the run: sluiced's control thread,
  # on the CPU the generator keeps busy, may answer seconds late.
  ctl stats clear >/dev/null
  result=$(boosted "$build/bench/pvp_traffic" --sock-a "$work/vhost/pvp-a/net1.sock" --sock-b "$work/vhost/pvp-b/net1.sock" \
    --gateway-mac "$mac" --seconds "$seconds" --warmup 1 --flows "$flows" 2>>"$work/gen.log" | tail -1)
  stats=$(ctl stats)
  echo "$stats" >"$out/stats-$(basename "$1")-$n-$(date +%H%M%S).txt"
  stop_sluiced
  stop_pods
  awk -v mpps="$(sed -n 's/.*"rx_mpps": \([0-9.]*\).*/\1/p' <<<"$result")" '
    /packets received:/ && !pkts { pkts = $3 }
    /cycles per packet/ && !cpp { cpp = $4 }
    /rx bursts:/ && !bursts { ppb = $4; gsub(/[(]/, "", ppb) }
    /idle rx queue polls:/ { polls = $5; left = $6; gsub(/[(]/, "", left) }
    /^Statistics over the last/ { secs = $5 }
    END {
      # Idle polls made and left out per 32 packets forwarded (a full burst),
      # and how often each idle queue was polled: the N idle ports and pod
      # B (which only receives) over the idle polls per second.
      # No packets counted: the counters were cleared too late (sluicectl
      # starved): the run is void, not a figure.
      if (pkts == 0) { mpps = ""; cpp = ""; ppb = "" }
      printf "%s %s %s %s %s %s\n", (mpps == "" ? "-" : mpps), (cpp == "" ? "-" : cpp), (ppb == "" ? "-" : ppb),
        (pkts > 0 && polls != "" ? sprintf("%.2f", 32 * polls / pkts) : "-"),
        (pkts > 0 && left != "" ? sprintf("%.2f", 32 * left / pkts) : "-"),
        (polls > 0 && secs > 0 ? sprintf("%.1f", (n * q + 1) * secs * 1e6 / polls) : "-")
    }' n="$n" q="$queues" <<<"$stats"
}

raw=$out/runs.csv
[[ -n $latency ]] || echo "round,system,idle_ports,mpps,cycles_per_packet,packets_per_burst,idle_polls_per_32_packets,idle_skipped_per_32_packets,idle_revisit_us" >"$raw"
{
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "commit: $(git -C "$root" rev-parse --short HEAD 2>/dev/null)"
  echo "machine: $(nproc) CPUs, $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo), $(uname -r)"
  echo "settings: rounds=$rounds seconds=$seconds flows=$flows idle=\"$idle_counts\" queues=$queues per-pod=$per_pod systems=\"$systems\""
} >"$out/machine.txt"
if [[ -n $latency ]]; then
  raw=$out/latency.csv
  echo "round,system,idle_ports,gap10_median_us,gap10_p99_us,gap10_max_us,gap100_median_us,gap100_p99_us,gap100_max_us" >"$raw"
  for ((r = 1; r <= rounds; r++)); do
    for n in $idle_counts; do
      for s in $systems; do
        read -r a b c d e f note <<<"$(run_latency "${s#*=}" "$n")"
        echo "round $r  ${s%%=*}  idle $n: first packet after 10 ms median/p99/max $a/$b/$c µs, after 100 ms $d/$e/$f µs ${note:-}" >&2
        echo "$r,${s%%=*},$n,$a,$b,$c,$d,$e,$f" >>"$raw"
      done
    done
  done
  cp "$work"/*.log "$work"/*.err "$out/" 2>/dev/null
  echo "results: $out" >&2
  exit 0
fi
for ((r = 1; r <= rounds; r++)); do
  for n in $idle_counts; do
    for s in $systems; do
      read -r mpps cpp ppb polls left revisit note <<<"$(run_one "${s#*=}" "$n")"
      echo "round $r  ${s%%=*}  idle $n: $mpps Mpps, $cpp cycles/pkt, $ppb pkts/burst, idle polls/32 pkts $polls, left/32 pkts $left, idle queue polled every $revisit µs ${note:-}" >&2
      echo "$r,${s%%=*},$n,$mpps,$cpp,$ppb,$polls,$left,$revisit" >>"$raw"
    done
  done
done
cp "$work"/*.log "$out/" 2>/dev/null

# Per system and N: medians over rounds, and the median of the per-round
# ratios of cycles/packet to N = 0 (same system, same round).
awk -F, 'NR > 1 && $5 != "-" {
    key = $2 "," $3; cpp[$1 "," key] = $5; mpps[$1 "," key] = $4
    systems[$2] = 1; ns[$3] = 1; rounds[$1] = 1
  }
  function median(a, n,   i, j, t) {
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  END {
    print "| system | idle ports | Mpps (median) | cycles/packet (median) | cycles/packet vs 0 idle (median of per-round ratios) |"
    print "|---|---:|---:|---:|---:|"
    for (s in systems) for (n in ns) {
      k = 0; delete c; delete m; delete q
      for (r in rounds) if ((r "," s "," n) in cpp) {
        k++; c[k] = cpp[r "," s "," n]; m[k] = mpps[r "," s "," n]
        q[k] = ((r "," s ",0") in cpp) ? cpp[r "," s "," n] / cpp[r "," s ",0"] : 0
      }
      if (k) printf "| %s | %d | %.2f | %.1f | %.3f |\n", s, n, median(m, k), median(c, k), median(q, k)
    }
  }' "$raw" | { read -r h1; read -r h2; echo "$h1"; echo "$h2"; sort -t'|' -k2,2 -k3,3n; } | tee "$out/summary.md"
echo "results: $out" >&2
