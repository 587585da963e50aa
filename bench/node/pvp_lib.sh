# Shared by the pod → dataplane → pod benchmarks (vhost_pvp.sh, flow_sweep.sh):
# one sluiced with two vhost-user pod ports, the generator bench/pvp_traffic
# playing both pods in one process. Sourced, not run. Expects $root, $build,
# $seconds and $work to be set by the caller.

ctl() { "$build/dataplane/sluicectl" --socket "$work/api.sock" "$@"; }
dp_pid=

cleanup() {
  set +e
  [[ -n $dp_pid ]] && kill -INT "$dp_pid" 2>/dev/null && wait "$dp_pid" 2>/dev/null
  rm -rf "$work"
}

run_generator() {  # socket-a socket-b gateway-mac flows → JSON line
  "$build/bench/pvp_traffic" --sock-a "$1" --sock-b "$2" --gateway-mac "$3" --seconds "$seconds" --warmup 1 \
    --flows "$4" 2>>"$work/gen.log" | tail -1
}

mpps_of() { sed -n 's/.*"rx_mpps": \([0-9.]*\).*/\1/p' <<<"$1"; }

# One sluiced run at `flows` flows: starts a fresh node with pods A and B,
# runs the generator, and leaves the generator's Mpps in $pvp_mpps and
# `sluicectl stats` in $pvp_stats for the caller to pick from. Counters are
# cleared after the generator's warm-up second, so they cover the measured
# seconds only.
pvp_run() {  # flows [extra sluiced flags...]
  local flows=$1
  shift
  rm -rf "$work/vhost" "$work/state"  # a fresh node each run (no restored ports)
  "$build/dataplane/sluiced" --api-socket "$work/api.sock" --socket-dir "$work/vhost" --state-dir "$work/state" \
    --pod-cidr 10.250.0.0/24 --main-core 0 --pmd-cores 1 "$@" \
    --eal "--no-huge --no-pci -m 1024 --no-shconf --file-prefix=pvp-sluiced-$$" 2>>"$work/sluiced.log" &
  dp_pid=$!
  for _ in $(seq 1 300); do ctl health >/dev/null 2>&1 && break; sleep 0.1; done
  # sluiced serves the sockets (the generator's virtio_user ports connect):
  # named, not left to sluicectl's default.
  ctl port add --container-id pvp-a --ifname net1 --ip 10.250.0.10 --socket-subdir pvp-a --mode server >/dev/null
  ctl port add --container-id pvp-b --ifname net1 --ip 10.250.0.11 --socket-subdir pvp-b --mode server >/dev/null
  local mac result clear_pid
  mac=$(ctl --json health | sed -n 's/.*"gateway_mac": "\(.*\)".*/\1/p')
  (sleep 1.5 && ctl stats clear >/dev/null) &
  clear_pid=$!
  result=$(run_generator "$work/vhost/pvp-a/net1.sock" "$work/vhost/pvp-b/net1.sock" "$mac" "$flows")
  wait "$clear_pid"
  pvp_stats=$(ctl stats)
  pvp_mpps=$(mpps_of "$result")
  kill -TERM "$dp_pid"
  wait "$dp_pid" || true
  dp_pid=
}

# pvp_run → "Mpps cycles/pkt emc% smc% megaflow% miss%".
run_sluiced() {  # flows [extra sluiced flags...]
  pvp_run "$@"
  awk -v mpps="$pvp_mpps" '
    function pct(line) { sub(/.*\( */, "", line); sub(/ *%\).*/, "", line); return line }
    /cycles per packet/ && !cpp { cpp = $4 }
    /- same-flow run hits/ { runs = pct($0) }  # exact matches: run hits + EMC hits
    /- EMC hits/ { emc = pct($0) + runs } /- SMC hits/ { smc = pct($0) }
    /- megaflow hits/ { mf = pct($0) } /- misses/ { miss = pct($0) }
    END { print mpps, cpp, emc, smc, mf, miss }' <<<"$pvp_stats"
}

median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
