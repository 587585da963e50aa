#!/usr/bin/env bash
# Pods across restarts and upgrades of sluiced: two pods' vhost-user ports in
# client mode (the default; the pods listen), paced traffic from pod A to pod
# B (restart_outage), and sluiced replaced again and again under it: killed
# (kill -9, a crash) and stopped (SIGTERM, then started, as a rolling update
# does), alternating between two builds when --new-sluiced is given. After
# each replacement it waits for traffic to resume, with no CNI call and no
# API call that changes anything, and checks that both attachments are still
# there. Reports every outage (last frame before to first frame after) and
# the median and max per way of stopping. A gap under 100 ms is not counted
# (a busy machine delays a frame that long now and then; a restart takes
# several times that).
#
# Usage: bench/restart/upgrade_outage.sh [--build DIR] [--rounds N]
#          [--new-sluiced PATH] [--out DIR]
# Needs root (EAL). Figures depend on the machine's load: compare rounds of
# one run, never a run against another machine's.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$root/build
rounds=20
new_sluiced=
out=
while (($#)); do
  case $1 in
    --build) build=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --new-sluiced) new_sluiced=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "usage: $0 [--build DIR] [--rounds N] [--new-sluiced PATH] [--out DIR]" >&2; exit 2 ;;
  esac
done

cmake --build "$build" -j "$(nproc)" --target sluiced sluicectl restart_outage >/dev/null
base_sluiced=$build/dataplane/sluiced
new_sluiced=${new_sluiced:-$base_sluiced}
work=$(mktemp -d /tmp/sluice-upgrade.XXXXXX)
out=${out:-$work/results}
mkdir -p "$out"
api=$work/api.sock
sluiced_pid=
tool_pid=

ctl() { "$build/dataplane/sluicectl" --socket "$api" --timeout 2000 "$@"; }

cleanup() {
  [[ -n $tool_pid ]] && kill -INT "$tool_pid" 2>/dev/null && wait "$tool_pid" 2>/dev/null
  [[ -n $sluiced_pid ]] && kill -TERM "$sluiced_pid" 2>/dev/null && wait "$sluiced_pid" 2>/dev/null
  cp "$work"/*.log "$work"/*.err "$out/" 2>/dev/null || true
  if [[ $out == "$work"/* ]]; then
    cp -r "$out" "/tmp/sluice-upgrade-results.$$"
    echo "results: /tmp/sluice-upgrade-results.$$"
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# Waits up to $1 seconds for the command in the remaining arguments.
wait_until() {
  local limit=$1
  shift
  local deadline=$((SECONDS + limit))
  until "$@"; do
    ((SECONDS < deadline)) || return 1
    sleep 0.02
  done
}

start_sluiced() {  # binary
  "$1" --api-socket "$api" --socket-dir "$work/vhost" --state-dir "$work/state" \
    --pod-cidr 10.250.0.0/24 --main-core 0 --pmd-cores 1 \
    --eal "--no-huge --no-pci -m 1024 --no-shconf --file-prefix=sluice-upgrade-$$" \
    2>>"$work/sluiced.log" &
  sluiced_pid=$!
}
healthy() { ctl health >/dev/null 2>&1; }
outages_seen() { grep -c '"outage_ms"' "$work/outage.log" || true; }
resumed() { (($(outages_seen) >= $1)); }
attachments() { ctl --json ports | grep -c '"container_id"' || true; }

start_sluiced "$base_sluiced"
wait_until 60 healthy || { cat "$work/sluiced.log"; exit 1; }
for pod in a b; do
  ip=10.250.0.1$([[ $pod == a ]] && echo 0 || echo 1)
  ctl port add --container-id "pod-$pod" --ifname net1 --ip "$ip" --mode client --socket-subdir "pod-$pod" >/dev/null
done
gateway_mac=$(ctl --json health | sed -n 's/.*"gateway_mac": "\(.*\)".*/\1/p')
"$build/bench/restart/restart_outage" --sock-a "$work/vhost/pod-a/net1.sock" --sock-b "$work/vhost/pod-b/net1.sock" \
  --gateway-mac "$gateway_mac" --gap-ms 100 >"$work/outage.log" 2>"$work/outage.err" &
tool_pid=$!
wait_until 60 grep -q '"ready"' "$work/outage.log" || { cat "$work/outage.err" "$work/sluiced.log"; exit 1; }

declare -A outages lost not_resumed
for way in kill9 term; do
  outages[$way]=
  lost[$way]=0
  not_resumed[$way]=0
  for ((r = 1; r <= rounds; r++)); do
    before=$(outages_seen)
    if [[ $way == kill9 ]]; then kill -KILL "$sluiced_pid"; else kill -TERM "$sluiced_pid"; fi
    wait "$sluiced_pid" 2>/dev/null || true
    # Every other start is the other build: an upgrade, then a downgrade.
    if ((r % 2)); then start_sluiced "$new_sluiced"; else start_sluiced "$base_sluiced"; fi
    if wait_until 60 resumed $((before + 1)); then
      wait_until 60 healthy || true
      # The round's outage: the longest gap since the replacement began.
      outages[$way]+="$(grep '"outage_ms"' "$work/outage.log" | tail -n +$((before + 1)) |
        sed 's/.*"outage_ms": \([0-9.]*\).*/\1/' | sort -n | tail -1) "
    else
      not_resumed[$way]=$((not_resumed[$way] + 1))
    fi
    wait_until 60 healthy || true
    (($(attachments) == 2)) || lost[$way]=$((lost[$way] + 2 - $(attachments)))
  done
done

kill -INT "$tool_pid"
wait "$tool_pid" || true
tool_pid=
summary=$out/summary.md
{
  echo "# Outages across sluiced restarts ($rounds rounds per way; client-mode ports)"
  echo
  echo "base: $base_sluiced"
  echo "new:  $new_sluiced"
  echo
  echo "| way | rounds | resumed | attachments lost | median ms | max ms | every outage (ms) |"
  echo "|---|---|---|---|---|---|---|"
  for way in kill9 term; do
    read -r -a v <<<"${outages[$way]}"
    stats=$(printf '%s\n' "${v[@]}" | sort -n | awk '{a[NR] = $1} END {
      if (NR == 0) { print "- -"; exit }
      m = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
      printf "%.1f %.1f\n", m, a[NR] }')
    echo "| $way | $rounds | $((rounds - not_resumed[$way])) | ${lost[$way]} | ${stats% *} | ${stats#* } | ${outages[$way]}|"
  done
  echo
  echo "traffic: $(tail -1 "$work/outage.log")"
} >"$summary"
cat "$summary"
