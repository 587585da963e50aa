#!/usr/bin/env bash
# Churn soak: many CNI ADD/DEL cycles through cnitool (real sluice-cni,
# host-local IPAM, real sluiced), sequential and concurrent, while two
# bystander pods exchange traffic through sluiced; then nothing may be left
# over and no bystander packet may vanish uncounted.
#
# Usage: churn_soak_test.sh [cycles] [parallelism]   (defaults 1000 and 4)
#
# Bystanders: one dpdk-testpmd process plays both pods, so that only two
# processes busy-poll on this 2-core machine (sluiced's PMD and this one).
# Its ports: 0 = net_pcap replaying frames pod A → pod B forever, 1 = pod A's
# virtio_user, 2 = pod B's virtio_user; io forwarding in chained topology
# (0 → 1 → 2 → 0) makes pod A send the pcap's frames into sluiced, and hands
# what pod B receives to the pcap port's tx (dropped). testpmd's own ethdev
# counters then say exactly how many packets pod A sent and pod B received.
# It runs niced on CPU 0, so the churn is not starved by it.
#
# Churn: every cycle makes a fresh netns (a fresh container id for cnitool),
# ADDs with a device-info file, checks the result's socket, DELs, removes
# the netns. Cycles run in halves of the same mix (a sequential quarter,
# then a quarter in `parallelism` concurrent workers, as kubelet runs pod
# set-ups and tear-downs side by side), so the middle and the end are
# measured after the same work.
#
# Asserted at the end:
#   - sluiced's ports, the vhost socket dir, the plugin's records, the
#     device-info dir, sluiced's state dir (checkpoint), host-local's leases
#     and libcni's cache hold the bystanders and nothing else; no churn netns
#     is left; sluiced's GC collected nothing (it would hide a leaked port
#     once its netns is gone);
#   - sluiced's fd count equals the count after warm-up;
#   - sluiced's VmRSS grew from the middle to the end by less than a bound
#     derived from what one port costs it (measured here: see rss_bound);
#   - per bystander port, testpmd's tx equals sluiced's rx and testpmd's rx
#     equals sluiced's tx; and sluiced's rx equals its tx plus its named drops.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

cycles=${1:-1000}
parallel=${2:-4}
[[ $cycles =~ ^[0-9]+$ && $cycles -ge 8 ]] || fail "cycles must be a number >= 8 (got '$cycles')"
[[ $parallel =~ ^[0-9]+$ && $parallel -ge 1 && $parallel -le 6 ]] ||
  fail "parallelism must be 1..6 (sluiced runs with 8 ports, 2 of them the bystanders)"

# A missing tool is a skip (77), not a failure: this test needs more than the
# others (testpmd's net_pcap, cnitool).
skip() {
  echo "SKIP: $*"
  exit 77
}
[[ $(id -u) -eq 0 ]] || skip "needs root"
[[ -x ${CNITOOL:-} ]] || skip "cnitool not found at '${CNITOOL:-}': run scripts/setup-e2e.sh"
command -v dpdk-testpmd >/dev/null || skip "dpdk-testpmd missing: run scripts/setup.sh"
[[ -x /usr/lib/cni/host-local ]] || skip "/usr/lib/cni/host-local missing: run scripts/setup.sh"
command -v jq >/dev/null || skip "jq missing: run scripts/setup-e2e.sh"
e2e_init

t_start=$SECONDS
start_sluiced 10.250.0.0/24
net=se2e-soak-$id
# Bystanders take the range's first two addresses (host-local hands them out
# in order); the churn cycles through the other 239, so addresses are reused
# every ~240 cycles, as in a busy node.
write_netconf "$net" 1.0.0 10.250.0.10 10.250.0.250
# The plugin writes device-info files only when the runtime passes the
# capability (Multus does); cnitool passes CAP_ARGS. vhostMode "server": the
# churn pods never listen, and sluiced as the vhost-user client would log
# DPDK's "failed to connect" warning for each of their ports, which the
# check of sluiced's log below must not have to excuse; with sluiced serving,
# each cycle also checks that the socket it made is there.
jq '.plugins[0].capabilities = {CNIDeviceInfoFile: true} | .plugins[0].vhostMode = "server"' \
  "$NETCONFPATH/$net.conflist" >"$work/conf.tmp"
mv "$work/conf.tmp" "$NETCONFPATH/$net.conflist"
devinfo=$work/devinfo
mkdir -p "$devinfo"
export CNI_IFNAME=net1
# Churn netns left by a failed run (each cycle removes its own).
e2e_cleanups+=("ip netns list | awk '{print \$1}' | grep '^se2e-$id-c' | xargs -r -n1 ip netns del")

rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$sluiced_pid/status"; }
# Resident kB per mapping of sluiced (its name, or for an anonymous one its
# end address: the kernel places new anonymous mappings below the last and
# merges neighbours, so an area of small mappings keeps its end; a malloc
# arena grows upwards and shows as -old/+new), to say where growth went:
# DPDK's memory (one large anonymous mapping with --no-huge), malloc's heap
# and arenas, thread stacks.
rss_map() {
  awk '/^[0-9a-f]+-[0-9a-f]+ / {k = ($6 != "") ? $6 : "anon-ending-" substr($1, index($1, "-") + 1)}
       /^Rss:/ {r[k] += $2}
       END {for (k in r) print k, r[k]}' "/proc/$sluiced_pid/smaps" | LC_ALL=C sort >"$work/rss.$1"
}
rss_growth() {  # from to → the five mappings that grew most, "mapping:+kB"
  LC_ALL=C join -a1 -a2 -e0 -o 0,1.2,2.2 "$work/rss.$1" "$work/rss.$2" |
    awk '$3 != $2 {print $3 - $2, $1}' | sort -nr | head -5 | awk '{printf "%s:%+d ", $2, $1}'
}
fd_count() { find "/proc/$sluiced_pid/fd" -mindepth 1 -maxdepth 1 | wc -l; }
gc_count() { ctl --json health | jq -r '.garbage_collected_attachments // 0 | tonumber'; }

# --- the bystanders
add_pod() {  # netns-path → result JSON on stdout
  local cid
  cid=$(cnitool_container_id "$1")
  CAP_ARGS="{\"CNIDeviceInfoFile\":\"$devinfo/$cid-net1.json\"}" "$CNITOOL" add "$net" "$1"
}
new_netns a ns_a
new_netns b ns_b
res_a=$(add_pod "$ns_a") || fail "cnitool add (pod A) failed: $res_a"
res_b=$(add_pod "$ns_b") || fail "cnitool add (pod B) failed: $res_b"
assert_jq "$res_a" '.ips[0].address == "10.250.0.10/24"' "pod A's address"
assert_jq "$res_b" '.ips[0].address == "10.250.0.11/24"' "pod B's address"
cid_a=$(cnitool_container_id "$ns_a")
cid_b=$(cnitool_container_id "$ns_b")
port_a=$(port_of "$cid_a" net1)
port_b=$(port_of "$cid_b" net1)
[[ -n $port_a && -n $port_b ]] || fail "bystander ports missing after ADD: $(ctl ports)"
sock_a=$(jq -r .socket_path <<<"$port_a")
sock_b=$(jq -r .socket_path <<<"$port_b")
no_a=$(jq -r .port_no <<<"$port_a")
no_b=$(jq -r .port_no <<<"$port_b")
mac_a=$(jq -r .mac <<<"$port_a")
mac_b=$(jq -r .mac <<<"$port_b")
gw_mac=$(ctl --json health | jq -r .gateway_mac)
[[ $gw_mac =~ ^([0-9a-f]{2}:){5}[0-9a-f]{2}$ ]] || fail "no gateway MAC from sluicectl health: '$gw_mac'"
# What the churn must leave exactly as it found it.
snapshot_dirs() {
  (cd "$work" && find vhost records devinfo state "ipam/$net" -mindepth 1 ! -name cni.log | sort)
  find /var/lib/cni/results -name "$net-*" 2>/dev/null | sort
  ip netns list | awk '{print $1}' | grep "^se2e-$id-" | sort
}

write_udp_pcap "$work/a_to_b.pcap" "$gw_mac" "$mac_a"

# --- testpmd, driven through a fifo (its interactive prompt) so the test
# can stop pod A's sending while pod B still drains its ring.
mkfifo "$work/testpmd.in"
# shellcheck disable=SC2094  # testpmd reads the fifo, the test writes it
stdbuf -oL nice -n 10 dpdk-testpmd --lcores 0@0,1@0 --no-huge --no-pci -m 512 --no-shconf \
  --file-prefix="se2e-soak-tp-$id" \
  --vdev "net_pcap0,rx_pcap=$work/a_to_b.pcap,infinite_rx=1" \
  --vdev "net_virtio_user1,path=$sock_a,mac=$mac_a,queues=1,queue_size=1024" \
  --vdev "net_virtio_user2,path=$sock_b,mac=$mac_b,queues=1,queue_size=1024" --log-level=4 \
  -- -i --no-mlockall --total-num-mbufs=16384 --port-topology=chained --forward-mode=io \
  <"$work/testpmd.in" >"$work/testpmd.log" 2>&1 &
tp_pid=$!
e2e_pids+=("$tp_pid")
# EAL leaves its (empty) runtime directory behind on exit, testpmd's and
# sluiced's alike; nothing is written there again once it is gone.
e2e_cleanups+=("rm -rf /var/run/dpdk/se2e-soak-tp-$id /var/run/dpdk/se2e-$id")
exec {tp_fd}>"$work/testpmd.in"
e2e_cleanups+=("exec $tp_fd>&-")
tp() { echo "$*" >&"$tp_fd"; }
both_links_up() { [[ $(ctl --json ports | jq '[.ports[] | select(.link_up)] | length') == 2 ]]; }
wait_until 60 both_links_up || fail "testpmd's virtio_user ports did not connect: $(ctl ports; tail -20 "$work/testpmd.log")"

# Counters. testpmd's: "show port stats all", its output parsed from the log
# past the offset where it was asked (three sections, each ending in Tx-pps).
tp_stats() {  # → "rxA txA rxB txB missed+nombuf+txerrors"
  local off
  off=$(stat -c %s "$work/testpmd.log")
  tp "show port stats all"
  tp_chunk() { tail -c +$((off + 1)) "$work/testpmd.log"; }
  tp_complete() { (($(tp_chunk | grep -c 'Tx-pps') >= 3)); }
  wait_until 20 tp_complete || fail "testpmd did not print its port stats: $(tail -20 "$work/testpmd.log")"
  tp_chunk | awk '
    /NIC statistics for port/ {p = $6}
    /RX-packets:/ {rx[p] = $2; if (p != 0) err += $4}
    /RX-nombuf:/ {if (p != 0) err += $2}
    /TX-packets:/ {tx[p] = $2; if (p != 0) err += $4}
    END {print rx[1] + 0, tx[1] + 0, rx[2] + 0, tx[2] + 0, err + 0}'
}
sl_stats() { ctl --json stats; }
sl_port() {  # stats-json port field
  jq -r --argjson p "$2" --arg f "$3" '[.ports[] | select(.port_no == $p) | .[$f] // 0 | tonumber] | add // 0' <<<"$1"
}
sl_drops() { jq -r '[.drops[]? | .packets // 0 | tonumber] | add // 0' <<<"$1"; }

ctl stats clear >/dev/null
tp start
rx_b_flowing() { (($(sl_port "$(sl_stats)" "$no_b" tx_packets) > 0)); }
wait_until 30 rx_b_flowing || fail "no traffic reached pod B: $(ctl stats; tail -20 "$work/testpmd.log")"
before=$(snapshot_dirs)
note "bystanders: pod A port $no_a ($mac_a), pod B port $no_b ($mac_b); traffic flowing"

# --- one churn cycle: fresh netns, ADD (with device-info), the result's
# socket exists, DEL, netns gone. Prints what went wrong and fails.
# A failed ADD is handled as containerd and kubelet do: DEL, then a new
# attempt (on this loaded 2-core machine host-local has been seen to
# overrun the plugin's 5 s IPAM deadline). Each failed attempt is written to
# add-failures; the end checks that what it left was cleaned up, and that
# the plugin logged no error but these.
churn_cycle() {
  local i=$1 ns="se2e-$id-c$1" nspath cid res out info sock try
  nspath=/var/run/netns/$ns
  ip netns add "$ns" || { echo "cycle $i: ip netns add failed"; return 1; }
  cid=$(cnitool_container_id "$nspath")
  info=$devinfo/$cid-net1.json
  for try in 1 2 3; do
    res=$(CAP_ARGS="{\"CNIDeviceInfoFile\":\"$info\"}" "$CNITOOL" add "$net" "$nspath" 2>&1) && break
    echo "cycle $i attempt $try: ${res//$'\n'/ }" >>"$work/add-failures"
    if ! out=$("$CNITOOL" del "$net" "$nspath" 2>&1); then
      echo "cycle $i: cnitool del after a failed add failed: $out"
      return 1
    fi
    ((try < 3)) || { echo "cycle $i: cnitool add failed 3 times: $res"; return 1; }
  done
  sock=$(jq -r '."vhost-user".path // empty' "$info" 2>/dev/null) || true
  if [[ -z $sock || ! -S $sock ]]; then
    echo "cycle $i: device-info $info names no socket ('$sock'): $res"
    return 1
  fi
  if ! out=$("$CNITOOL" del "$net" "$nspath" 2>&1); then
    echo "cycle $i: cnitool del failed: $out"
    return 1
  fi
  ip netns del "$ns" || { echo "cycle $i: ip netns del failed"; return 1; }
}

# Cycles [first, first+count) in `par` workers (worker w takes every par-th).
run_cycles() {  # first count par
  local first=$1 count=$2 par=$3 w rc=0 pids=()
  for ((w = 0; w < par; w++)); do
    (
      for ((i = first + w; i < first + count; i += par)); do
        churn_cycle "$i" >>"$work/churn-errors.$w" 2>&1 || exit 1
      done
    ) &
    pids+=($!)
  done
  for w in "${pids[@]}"; do wait "$w" || rc=1; done
  if ((rc != 0)); then
    cat "$work"/churn-errors.* >&2
    fail "churn cycles failed (above)"
  fi
}
# Half the work: a sequential quarter, then a concurrent quarter.
run_half() {  # first count
  local seq=$(($2 / 2))
  run_cycles "$1" "$seq" 1
  run_cycles $(($1 + seq)) $(($2 - seq)) "$parallel"
}
# The fd count may lag the last client's disconnect by a moment (gRPC closes
# the connection's socket on its own thread): wait for it to settle.
settled_fds() {  # expected → true once the count is it
  [[ $(fd_count) == "$1" ]]
}

# --- what one port costs sluiced: RSS with `parallel` churn ports held at
# once, against RSS before any churn port existed. The first ports a fresh
# sluiced makes touch memory no port touched before, so this is an upper
# estimate of a port's footprint (later ports reuse freed memory).
rss_fresh=$(rss_kb)
held=()
for ((i = 0; i < parallel; i++)); do
  ns="se2e-$id-c-held$i"
  ip netns add "$ns"
  add_pod "/var/run/netns/$ns" >/dev/null || fail "ADD of held pod $i failed"
  held+=("/var/run/netns/$ns")
done
rss_held=$(rss_kb)
for nspath in "${held[@]}"; do
  out=$("$CNITOOL" del "$net" "$nspath" 2>&1) || fail "DEL of held pod failed: $out"
  ip netns del "${nspath##*/}"
done
port_kb=$(((rss_held - rss_fresh + parallel - 1) / parallel))
note "RSS fresh ${rss_fresh} kB, with $parallel churn ports held ${rss_held} kB: ~${port_kb} kB per port"

# --- warm-up (gRPC's threads and connections, DPDK's and malloc's free lists
# reach their working size), then the start figures.
warm=$((cycles / 50 < 2 * parallel ? 2 * parallel : cycles / 50))
t0=$SECONDS
run_half 0 "$warm"
fds_start=$(fd_count)
rss_start=$(rss_kb)
rss_map start
note "after $warm warm-up cycles ($((SECONDS - t0)) s): fds $fds_start, VmRSS $rss_start kB"

half=$((cycles / 2))
t0=$SECONDS
run_half "$warm" "$half"
t_half1=$((SECONDS - t0))
wait_until 5 settled_fds "$fds_start" || true
fds_mid=$(fd_count)
rss_mid=$(rss_kb)
rss_map mid
st=$(sl_stats)
tx_b_mid=$(sl_port "$st" "$no_b" tx_packets)
note "after $half cycles ($t_half1 s): fds $fds_mid, VmRSS $rss_mid kB, pod B received $tx_b_mid so far"
note "RSS growth by mapping since the start: $(rss_growth start mid)"

t0=$SECONDS
run_half $((warm + half)) $((cycles - half))
t_half2=$((SECONDS - t0))
wait_until 5 settled_fds "$fds_start" || true
fds_end=$(fd_count)
rss_end=$(rss_kb)
rss_map end
st=$(sl_stats)
tx_b_end=$(sl_port "$st" "$no_b" tx_packets)
note "after $cycles cycles ($t_half2 s more): fds $fds_end, VmRSS $rss_end kB, pod B received $tx_b_end so far"
note "RSS growth by mapping since the middle: $(rss_growth mid end)"
((tx_b_end > tx_b_mid && tx_b_mid > 0)) || fail "bystander traffic stalled during the churn ($tx_b_mid, then $tx_b_end)"

# --- leaks
after=$(snapshot_dirs)
if [[ $after != "$before" ]]; then
  note "before: $before"
  note "after:  $after"
  diff <(echo "$before") <(echo "$after") >&2 || true
  fail "the churn left files, sockets, leases, cache entries or netns behind (diff above)"
fi
ports=$(ctl --json ports)
assert_jq "$ports" "[.ports[].attachment.container_id] | sort == ([\"$cid_a\", \"$cid_b\"] | sort)" \
  "sluiced's ports are the bystanders' only"
assert_jq "$(cat "$work/state/checkpoint.json")" \
  "[.ports[].container_id] | sort == ([\"$cid_a\", \"$cid_b\"] | sort)" "the checkpoint names the bystanders only"
[[ $(find "$work/ipam/$net" -name '10.*' -printf '%f\n' | sort | tr '\n' ' ') == "10.250.0.10 10.250.0.11 " ]] ||
  fail "host-local leases besides the bystanders': $(ls "$work/ipam/$net")"
[[ $(gc_count) == 0 ]] || fail "sluiced's GC collected $(gc_count) attachments: a DEL left a port behind"
[[ $fds_end == "$fds_start" ]] || {
  ls -l "/proc/$sluiced_pid/fd" >&2
  fail "sluiced's fds: $fds_start after warm-up, $fds_end at the end"
}
# Flat memory: from the middle to the end (the same mix of cycles) VmRSS may
# grow by less than what leaking a tenth of a port per cycle would add, and
# never by more than 2 MiB. The floor of the bound, 1 MiB, is above the
# noise of glibc's per-thread arenas and gRPC's per-connection buffers (308
# kB seen once between two halves of a run that leaked nothing: the fds and
# every mapping's growth were flat).
growth=$((rss_end - rss_mid))
rss_bound=$((port_kb * (cycles - half) / 10))
((rss_bound > 2048)) && rss_bound=2048
((rss_bound < 1024)) && rss_bound=1024
((growth < rss_bound)) ||
  fail "sluiced's VmRSS grew ${growth} kB over the second $((cycles - half)) cycles (bound ${rss_bound} kB): start $rss_start, middle $rss_mid, end $rss_end"

# --- bystander accounting. Stop pod A's sending, let sluiced drain pod A's
# ring (its rx count stops moving), then let pod B drain its own ring with
# receive-only forwarding until it has what sluiced says it sent it.
tp stop
rx_a_now() { sl_port "$(sl_stats)" "$no_a" rx_packets; }
prev=-1
for _ in $(seq 1 100); do
  cur=$(rx_a_now)
  [[ $cur == "$prev" ]] && break
  prev=$cur
  sleep 0.2
done
tp "set fwd rxonly"
tp start
st=$(sl_stats)
b_drained() { read -r _ _ r _ _ < <(tp_stats) && [[ $r == "$(sl_port "$st" "$no_b" tx_packets)" ]]; }
wait_until 20 b_drained || true
tp stop
read -r rx_a tx_a rx_b tx_b tp_err < <(tp_stats)
st=$(sl_stats)
s_rx_a=$(sl_port "$st" "$no_a" rx_packets) s_tx_a=$(sl_port "$st" "$no_a" tx_packets)
s_rx_b=$(sl_port "$st" "$no_b" rx_packets) s_tx_b=$(sl_port "$st" "$no_b" tx_packets)
s_dropped=$(jq -r '[.ports[] | (.tx_dropped // 0 | tonumber) + (.rx_dropped // 0 | tonumber)] | add // 0' <<<"$st")
drops=$(sl_drops "$st")
named=$(jq -r '[.drops[]? | select((.packets // 0 | tonumber) > 0) | "\(.reason)=\(.packets)"] | join(" ")' <<<"$st")
note "pod A sent $tx_a (sluiced rx $s_rx_a), pod B received $rx_b (sluiced tx $s_tx_b);" \
  "sluiced dropped $drops by reason [$named], per-port tx/rx dropped $s_dropped; testpmd errors $tp_err"
((tx_a > 0 && rx_b > 0)) || fail "no bystander traffic"
((tx_a == s_rx_a)) || fail "pod A sent $tx_a, sluiced received $s_rx_a from it"
((rx_b == s_tx_b)) || fail "sluiced sent pod B $s_tx_b, pod B received $rx_b"
((rx_a == s_tx_a && tx_b == s_rx_b)) || fail "reverse direction: A rx $rx_a/sluiced tx $s_tx_a, B tx $tx_b/sluiced rx $s_rx_b"
((s_rx_a + s_rx_b == s_tx_a + s_tx_b + drops)) ||
  fail "sluiced: rx $((s_rx_a + s_rx_b)) != tx $((s_tx_a + s_tx_b)) + named drops $drops"
((drops == s_dropped)) || fail "named drops $drops != per-port dropped $s_dropped"
((tp_err == 0)) || fail "testpmd counted $tp_err rx-missed/nombuf/tx-errors"
((tx_a == rx_b + drops)) || fail "pod A sent $tx_a = pod B received $rx_b + dropped $drops does not hold"

# --- the bystanders go too, and leave nothing
tp quit
for nspath in "$ns_a" "$ns_b"; do
  out=$("$CNITOOL" del "$net" "$nspath" 2>&1) || fail "cnitool del (bystander) failed: $out"
done
[[ $(port_count) == 0 ]] || fail "ports left after the bystanders' DEL: $(ctl ports)"
left=$(find "$work/vhost" "$work/devinfo" -mindepth 1; find "$work/records" -type f ! -name cni.log)
[[ -z $left ]] || fail "left after the bystanders' DEL: $left"
# Nothing went wrong on the way, not even something that was recovered.
if grep -v ' info: \|^TELEMETRY: ' "$work/sluiced.log" | grep -q .; then
  grep -v ' info: \|^TELEMETRY: ' "$work/sluiced.log" | head -20 >&2
  fail "sluiced logged warnings or errors (above)"
fi
# The plugin's only complaints may be errors of the failed ADD attempts.
add_failures=$(grep -c . "$work/add-failures" 2>/dev/null || true)
add_failures=${add_failures:-0}
if grep -v '\] info \|\] error ADD ' "$work/records/cni.log" | grep -q . ||
  { [[ $add_failures == 0 ]] && grep -q '\] error ' "$work/records/cni.log"; }; then
  grep -v '\] info ' "$work/records/cni.log" | head -20 >&2
  fail "sluice-cni logged warnings or errors besides the $add_failures failed ADD attempts (above)"
fi
((add_failures <= cycles / 100)) || {
  cat "$work/add-failures" >&2
  fail "$add_failures ADD attempts failed, more than 1% of the cycles (above)"
}

echo "SOAK cycles=$cycles parallel=$parallel duration_s=$((t_half1 + t_half2)) (whole test $((SECONDS - t_start)) s)" \
  "fds start=$fds_start middle=$fds_mid end=$fds_end" \
  "rss_kB fresh=$rss_fresh start=$rss_start middle=$rss_mid end=$rss_end growth=$growth bound=$rss_bound port=$port_kb" \
  "sent=$tx_a received=$rx_b dropped=$drops [$named] failed_add_attempts=$add_failures"
[[ $add_failures == 0 ]] || note "failed ADD attempts (retried after a DEL): $(cat "$work/add-failures")"
echo "PASS"
