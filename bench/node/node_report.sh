#!/usr/bin/env bash
# Summarises a node benchmark results folder (runs.csv from node_bench.sh):
#   summary.csv  medians over rounds per (scenario, flows, system), cycles/packet
#                net of the harness floor, and the median of the per-round
#                ratios Sluice/OVS and Sluice/OVS+SMC (ratios are taken within a
#                round, where both systems saw the same machine state);
#   results.md   the same as Markdown tables, one per scenario;
#   <scenario>.png  Mpps vs flows (log x), one line per system and the floor
#                (needs gnuplot: bash scripts/setup-bench.sh installs it).
# Usage: bench/node/node_report.sh RESULTS_DIR
set -euo pipefail
dir=$1
raw="$dir/runs.csv"
[[ -f $raw ]] || { echo "node_report.sh: no $raw" >&2; exit 2; }

# mawk has no asort: medians by insertion sort of each key's few values.
awk -F, '
  function median(list,   v, n, i, j, t) {
    n = split(list, v, " ")
    if (n == 0) return "-"
    for (i = 2; i <= n; i++) { t = v[i] + 0; for (j = i - 1; j >= 1 && v[j] + 0 > t; j--) v[j + 1] = v[j]; v[j + 1] = t }
    return (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
  }
  function add(key, value) { if (value != "-" && value != "") acc[key] = acc[key] " " value }
  NR == 1 { next }
  {
    round = $1; sc = $2; n = $3; sys = $4
    if (!((sc, n) in seen)) { seen[sc, n] = 1; order[++cells] = sc SUBSEP n }
    systems[sys] = 1
    add(sc SUBSEP n SUBSEP sys SUBSEP "mpps", $5)
    add(sc SUBSEP n SUBSEP sys SUBSEP "cpp", $6)
    add(sc SUBSEP n SUBSEP sys SUBSEP "emc", $7)
    add(sc SUBSEP n SUBSEP sys SUBSEP "smc", $8)
    add(sc SUBSEP n SUBSEP sys SUBSEP "mf", $9)
    add(sc SUBSEP n SUBSEP sys SUBSEP "miss", $10)
    mpps[round, sc, n, sys] = $5
    cpp[round, sc, n, sys] = $6
    rounds[round] = 1
  }
  END {
    print "scenario,flows,system,mpps,cycles_per_packet,net_cycles_per_packet,emc_pct,smc_pct,megaflow_pct,miss_pct,sluice_over_this"
    for (c = 1; c <= cells; c++) {
      split(order[c], k, SUBSEP); sc = k[1]; n = k[2]
      # Per-round ratios and floor-net cycles, then their medians.
      for (sys in systems) {
        ratios = ""; nets = ""
        for (r in rounds) {
          s = mpps[r, sc, n, "sluice"]; o = mpps[r, sc, n, sys]
          if (s != "" && s != "-" && o != "" && o != "-" && o + 0 > 0) ratios = ratios " " sprintf("%.3f", s / o)
          f = cpp[r, sc, n, "floor"]; x = cpp[r, sc, n, sys]
          if (f != "" && f != "-" && x != "" && x != "-") nets = nets " " sprintf("%.1f", x - f)
        }
        key = sc SUBSEP n SUBSEP sys
        if (!((key SUBSEP "mpps") in acc) && !((key SUBSEP "cpp") in acc)) continue
        printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", sc, n, sys, median(acc[key SUBSEP "mpps"]),
          median(acc[key SUBSEP "cpp"]), (sys == "floor" ? "0" : median(nets)), median(acc[key SUBSEP "emc"]),
          median(acc[key SUBSEP "smc"]), median(acc[key SUBSEP "mf"]), median(acc[key SUBSEP "miss"]),
          (sys == "sluice" || sys == "floor") ? "-" : median(ratios)
      }
    }
  }' "$raw" | { read -r header; echo "$header"; sort -t, -k1,1 -k2,2n -k3,3; } >"$dir/summary.csv"

# Markdown: one table per scenario.
{
  echo "# Node benchmark results"
  echo
  sed 's/^/    /' "$dir/machine.txt" 2>/dev/null || true
  echo
  echo "Medians over rounds; Mpps at 64 bytes; c/p = cycles per packet (testpmd's, sluiced's busy cycles /"
  echo "packets, OVS's pmd-perf-show); net = minus the floor's c/p in the same round; ratio = median of the"
  echo "per-round Sluice/OVS Mpps ratios; tiers = EMC/SMC/megaflow/miss % (Sluice's EMC figure includes"
  echo "its same-flow run hits, given alone as runs= in runs.csv; OVS: per datapath pass)."
  for sc in $(awk -F, 'NR > 1 { print $1 }' "$dir/summary.csv" | uniq); do
    echo
    echo "## $sc"
    echo
    echo "| flows | floor Mpps (c/p) | Sluice Mpps | c/p (net) | OVS Mpps | c/p (net) | OVS+SMC Mpps | c/p (net) | Sluice/OVS | Sluice/OVS+SMC | Sluice tiers | OVS tiers | OVS+SMC tiers |"
    echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|"
    awk -F, -v sc="$sc" '
      NR > 1 && $1 == sc {
        n = $2; flows[n] = 1; m[n, $3] = $4; c[n, $3] = $5; net[n, $3] = $6; q[n, $3] = $11
        t[n, $3] = $7 "/" $8 "/" $9 "/" $10
      }
      function g(a, key) { return (key in a) ? a[key] : "-" }
      END {
        # flows ascending (a handful: insertion sort)
        k = 0; for (n in flows) list[++k] = n + 0
        for (i = 2; i <= k; i++) { v = list[i]; for (j = i - 1; j >= 1 && list[j] > v; j--) list[j + 1] = list[j]; list[j + 1] = v }
        for (i = 1; i <= k; i++) {
          n = list[i]
          printf "| %s | %s (%s) | %s | %s (%s) | %s | %s (%s) | %s | %s (%s) | %s | %s | %s | %s | %s |\n", n,
            g(m, n SUBSEP "floor"), g(c, n SUBSEP "floor"),
            g(m, n SUBSEP "sluice"), g(c, n SUBSEP "sluice"), g(net, n SUBSEP "sluice"),
            g(m, n SUBSEP "ovs"), g(c, n SUBSEP "ovs"), g(net, n SUBSEP "ovs"),
            g(m, n SUBSEP "ovs-smc"), g(c, n SUBSEP "ovs-smc"), g(net, n SUBSEP "ovs-smc"),
            g(q, n SUBSEP "ovs"), g(q, n SUBSEP "ovs-smc"),
            g(t, n SUBSEP "sluice"), g(t, n SUBSEP "ovs"), g(t, n SUBSEP "ovs-smc")
        }
      }' "$dir/summary.csv"
    # Optional systems (e.g. sluice-swoffload), when the run had any.
    if awk -F, -v sc="$sc" 'NR > 1 && $1 == sc && $3 !~ /^(floor|sluice|ovs|ovs-smc)$/ { found = 1 } END { exit !found }' "$dir/summary.csv"; then
      echo
      echo "| flows | system | Mpps | c/p (net) | tiers | Sluice/this |"
      echo "|---:|---|---:|---:|---|---:|"
      awk -F, -v sc="$sc" 'NR > 1 && $1 == sc && $3 !~ /^(floor|sluice|ovs|ovs-smc)$/ {
        printf "| %s | %s | %s | %s (%s) | %s/%s/%s/%s | %s |\n", $2, $3, $4, $5, $6, $7, $8, $9, $10, $11 }' "$dir/summary.csv"
    fi
    if [[ $sc == vhost ]]; then
      echo
      echo "vhost: pod A → dataplane → pod B over vhost-user (bench/pvp_traffic plays both pods on lcore 0; N flows"
      echo "differ in UDP source port, one destination). Mpps = what reached pod B, as the dataplane counts it;"
      echo "floor = testpmd io-forwarding between the two vhost-user ports (no lookup, no rewrite). Where the pods"
      echo "are slower than the dataplane the figure is the pods' limit (runs.csv: pods = their receive Mpps,"
      echo "podfull = packets pod B's full ring refused); compare cycles/packet there."
    fi
    [[ -f $dir/$sc.png || $(command -v gnuplot) ]] && { echo; echo "![$sc]($sc.png)"; }
  done
  if grep -q "ovs-not-installed" "$raw"; then
    echo
    echo "OVS columns are empty: Open vSwitch with DPDK was not installed (bash scripts/setup-bench.sh)."
  fi
} >"$dir/results.md"

# Plots: Mpps vs flows, log x, one line per system.
if ! command -v gnuplot >/dev/null; then
  echo "node_report.sh: gnuplot not installed, no plots (bash scripts/setup-bench.sh)" >&2
  exit 0
fi
for sc in $(awk -F, 'NR > 1 { print $1 }' "$dir/summary.csv" | uniq); do
  dat="$dir/$sc.dat"
  awk -F, -v sc="$sc" '
    NR > 1 && $1 == sc { flows[$2] = 1; m[$2, $3] = ($4 == "-" ? "NaN" : $4) }
    END {
      print "# flows floor sluice ovs ovs-smc (Mpps, medians)"
      k = 0; for (n in flows) list[++k] = n + 0
      for (i = 2; i <= k; i++) { v = list[i]; for (j = i - 1; j >= 1 && list[j] > v; j--) list[j + 1] = list[j]; list[j + 1] = v }
      for (i = 1; i <= k; i++) {
        n = list[i]; line = n
        split("floor sluice ovs ovs-smc", s, " ")
        for (j = 1; j <= 4; j++) line = line " " (((n SUBSEP s[j]) in m) ? m[n, s[j]] : "NaN")
        print line
      }
    }' "$dir/summary.csv" >"$dat"
  gnuplot 2>>"$dir/gnuplot.log" <<EOF
set terminal pngcairo size 900,560 noenhanced
set output "$dir/$sc.png"
set title "Node benchmark: $sc (64 B, one PMD core; medians)"
set logscale x 10
set xlabel "flows (round-robin)"
set ylabel "Mpps"
set yrange [0:*]
set key outside right
set grid
plot "$dat" using 1:2 with linespoints dashtype 2 title "harness floor (testpmd io)", \
     "" using 1:3 with linespoints linewidth 2 title "Sluice", \
     "" using 1:4 with linespoints title "OVS 3.1 (EMC)", \
     "" using 1:5 with linespoints title "OVS 3.1 (EMC+SMC)"
EOF
done
