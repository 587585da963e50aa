#!/usr/bin/env bash
# The README's first command, `bash scripts/demo.sh`, run as a user runs it:
# it must exit 0, and its summary must show pod B receiving most of what pod
# A sent (or the one line that says why not) with every count it prints
# adding up. demo.sh itself fails on nothing received and on any drop other
# than pod B's full ring; this test also reads its numbers back, so a demo
# that stopped checking would still be caught here.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
[[ $(id -u) -eq 0 ]] || { echo "FAIL: needs root (sluiced's EAL)" >&2; exit 1; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
if ! bash "$root/scripts/demo.sh" 2 >"$out" 2>&1; then
  cat "$out" >&2
  echo "FAIL: scripts/demo.sh exited non-zero" >&2
  exit 1
fi
cat "$out"
summary=$(grep -A1 "^== pod A sent" "$out" | tr '\n' ' ')
read -r sent taken delivered dropped received < <(sed -E \
  's/.*pod A sent ([0-9]+) packets.*took ([0-9]+) of them and delivered ([0-9]+) to.*\(([0-9]+) dropped there.*pod B received ([0-9]+).*/\1 \2 \3 \4 \5/' \
  <<<"$summary")
[[ ${received:-} =~ ^[0-9]+$ ]] || { echo "FAIL: no summary line in the demo's output: $summary" >&2; exit 1; }
((received > 0)) || { echo "FAIL: pod B received nothing" >&2; exit 1; }
((received == delivered)) || { echo "FAIL: pod B received $received, sluiced delivered $delivered" >&2; exit 1; }
((taken <= sent)) || { echo "FAIL: sluiced took $taken, pod A sent $sent" >&2; exit 1; }
grep -Eq "^== (Sluice forwarded: $received of the $sent packets|pod B received [0-9]+ % of what pod A sent: both pods share CPU 0)" "$out" ||
  { echo "FAIL: no verdict line" >&2; exit 1; }
echo "demo: pod A sent $sent, sluiced took $taken, delivered $delivered (dropped $dropped), pod B received $received"
