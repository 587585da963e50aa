#!/usr/bin/env bash
# Pod → sluiced → pod at N round-robin flows (64-byte frames, one PMD core),
# against sluiced's own 1-flow rate measured in the same run: the flow-cache
# goal is >= 80% of the 1-flow rate at 100k flows. Flow counts run
# interleaved, `rounds` times (this machine's throughput is bimodal between
# runs); medians per N, each N's ratio to 1 flow computed per round and then
# the median taken. Also prints where packets were resolved (EMC / SMC /
# megaflow classifier / miss, % of the measured seconds).
# The flows differ in source port and address and all go to one pod, so they
# share one megaflow (sluiced routes on the destination): this measures the
# per-flow tiers (EMC, SMC) and the policy that picks them, not classifier
# width.
# Usage: bench/node/flow_sweep.sh [rounds] [seconds] [flow counts...]   (root, after a build)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${BUILD:-$root/build}
rounds=${1:-3}
seconds=${2:-5}
shift 2 || true
counts=("$@")
[[ ${#counts[@]} -gt 0 ]] || counts=(1 100 1000 10000 100000 500000)
[[ ${counts[0]} == 1 ]] || counts=(1 "${counts[@]}")
work=$(mktemp -d /tmp/sluice-sweep.XXXXXX)
source "$root/bench/node/pvp_lib.sh"
trap cleanup EXIT
# NO_BUILD=1 runs the binaries already in $build (e.g. to compare builds).
[[ -n ${NO_BUILD:-} ]] || cmake --build "$build" -j "$(nproc)" --target sluiced sluicectl pvp_traffic >/dev/null

declare -A mpps cpp tiers ratio
for r in $(seq 1 "$rounds"); do
  one=
  for n in "${counts[@]}"; do
    read -r m c emc smc mf miss < <(run_sluiced "$n")
    [[ $n == 1 ]] && one=$m
    q=$(awk -v a="$m" -v b="$one" 'BEGIN {printf "%.3f", (b > 0) ? a / b : 0}')
    echo "round $r  flows $n: $m Mpps, $c cycles/pkt, vs 1 flow $q  (emc $emc% smc $smc% megaflow $mf% miss $miss%)" >&2
    mpps[$n]+="$m " cpp[$n]+="$c " ratio[$n]+="$q "
    tiers[$n]="$emc/$smc/$mf/$miss"
  done
done
printf "%-8s %-10s %-12s %-12s %s\n" flows Mpps cycles/pkt "vs 1 flow" "emc/smc/megaflow/miss % (last round)"
for n in "${counts[@]}"; do
  printf "%-8s %-10s %-12s %-12s %s\n" "$n" "$(tr ' ' '\n' <<<"${mpps[$n]}" | grep . | median)" \
    "$(tr ' ' '\n' <<<"${cpp[$n]}" | grep . | median)" "$(tr ' ' '\n' <<<"${ratio[$n]}" | grep . | median)" "${tiers[$n]}"
done
echo "[medians of $rounds interleaved rounds, ${seconds}s each, 64 B, one PMD core]"
