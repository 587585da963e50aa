#!/usr/bin/env bash
# Pod -> dataplane -> pod, 64-byte frames, with and without partial offload
# (the software engine on pod A's port, so every packet of the one megaflow
# is marked), interleaved rounds, medians. Per configuration: Mpps, the PMD's
# cycles/packet (busy cycles / packets), and for the offload run the software
# engine's own cycles/packet (timed inside its rx callback, which runs within
# the PMD's busy cycles) and the net cycles/packet = PMD - engine: what the
# PMD costs when a NIC marks. Only ratios within one run mean anything here.
#   bench/offload/pvp_offload.sh [rounds] [seconds] ["flows ..."]
# BUILD=<build dir with -DSLUICE_BENCH=ON> (default: build).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$root/build}
rounds=${1:-3}
seconds=${2:-5}
flows_list=${3:-"1 10000"}
work=$(mktemp -d /tmp/pvp-offload.XXXXXX)
# shellcheck source=../node/pvp_lib.sh
source "$root/bench/node/pvp_lib.sh"
trap cleanup EXIT

# One run -> "Mpps pmd_cycles/pkt engine_cycles/pkt mark_hit%".
run_one() {  # flows [extra sluiced flags...]
  pvp_run "$@"
  awk -v mpps="$pvp_mpps" '
    function pct(line) { sub(/.*\( */, "", line); sub(/ *%\).*/, "", line); return line }
    /cycles per packet/ && !cpp { cpp = $4 }
    /- mark hits/ { mark = pct($0) }
    /software engine:/ { eng = $3 }
    END { print mpps, cpp, (eng == "" ? 0 : eng), (mark == "" ? 0 : mark) }' <<<"$pvp_stats"
}

printf "%-7s %-8s %8s %12s %12s %12s %8s\n" flows config Mpps "PMD cyc/pkt" "engine" "net cyc/pkt" "mark%"
for flows in $flows_list; do
  declare -A pmd=() eng=() mpps=() mark=()
  for r in $(seq 1 "$rounds"); do
    for config in off software; do
      if [[ $config == off ]]; then
        read -r m c e k < <(run_one "$flows")
      else
        read -r m c e k < <(run_one "$flows" --offload-provider software --offload-port pvp-a/net1)
      fi
      mpps[$config]+="$m "; pmd[$config]+="$c "; eng[$config]+="$e "; mark[$config]+="$k "
      printf "%-7s %-8s %8s %12s %12s %12s %8s   (round %d)\n" "$flows" "$config" "$m" "$c" "$e" \
        "$(awk -v c="$c" -v e="$e" 'BEGIN { printf "%.1f", c - e }')" "$k" "$r"
    done
  done
  for config in off software; do
    med() { tr ' ' '\n' <<<"$1" | grep -v '^$' | median; }
    c=$(med "${pmd[$config]}")
    e=$(med "${eng[$config]}")
    printf "%-7s %-8s %8s %12s %12s %12s %8s   median\n" "$flows" "$config" "$(med "${mpps[$config]}")" "$c" "$e" \
      "$(awk -v c="$c" -v e="$e" 'BEGIN { printf "%.1f", c - e }')" "$(med "${mark[$config]}")"
  done
  unset pmd eng mpps mark
done
