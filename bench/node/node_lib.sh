# The node benchmark's runners, sourced by node_bench.sh: one
# function per system under test, each taking the same pcap file (replayed by
# net_pcap with infinite_rx=1) and sending to net_null sinks (no-rx=1), one
# PMD on lcore 1, the main/control thread on lcore 0. Each prints one line:
#   "<Mpps> <cycles/packet> <emc%> <smc%> <megaflow%> <miss%> <note>"
# ("-" where a system has no such figure; note is one word, "ok" or why not).
# Expects $build, $work, $seconds and $warmup from the caller.

gen=${gen:-$build/bench/node/node_pcap_gen}
ovs_vswitchd=${OVS_VSWITCHD:-/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk}
# Every EAL file prefix, netns and directory of a run carries this, so
# parallel runs (and other tests) never collide.
tag="nb$$"

# EAL memory flags for MB megabytes: without hugepages (the default: nothing
# to reserve) or, with node_bench.sh --hugepages ($huge=1), 2 MB hugepages as
# DPDK is deployed (the issue's OVS figures were measured so). --in-memory:
# no files, nothing left behind after a kill.
eal_mem() {  # MB
  if [[ -n ${huge:-} ]]; then echo "-m $1 --in-memory"
  else echo "--no-huge -m $1 --no-shconf"; fi
}

# Every dataplane under test runs in a session of its own, as ovs-vswitchd
# does (--detach): with the kernel's autogroup scheduling on (Debian's
# default) a session is one scheduling group, and CPU time is shared between
# groups first. In the script's session the dataplane would share one
# group's weight with the pods (vhost), and lose twice as much to anything
# else busy on the machine as OVS does. `setsid` execs in place (a
# script's background job leads no process group), so $! stays the
# dataplane's pid.

# The addressing plan, from the generator (one source of truth).
# Read once (plan_load): every run looks up dozens of fields.
plan_text=
plan() { [[ -n $plan_text ]] || plan_text=$("$gen" --plan); printf '%s\n' "$plan_text"; }
plan_field() {  # what column... → value(s)
  plan | awk -v what="$1" -v col="$2" '$1 == what { print $col }'
}
plan_pod() {  # k column → pod k's field (3 ip, 4 mac, 5 subnet, 6 ipv6)
  plan | awk -v k="$1" -v col="$2" '$1 == "pod" && $2 == k { print $col }'
}
plan_remote() {  # k column → remote node k's field (3 vtep, 4 vtep mac, 5 pod cidr, 6 pod ip)
  plan | awk -v k="$1" -v col="$2" '$1 == "remote" && $2 == k { print $col }'
}
plan_load() {
  plan_text=$("$gen" --plan)
  pods=$(plan | awk '$1 == "pod"' | wc -l)
  remotes=$(plan | awk '$1 == "remote"' | wc -l)
  pod_cidr=$(plan_field pod_cidr 2)
  gw_ip=$(plan_field gateway 2)
  gw_mac=$(plan_field gateway 3)
  src_ip=$(plan_field source_pod 2)
  src_mac=$(plan_field source_pod 3)
  vtep_ip=$(plan_field vtep 2)
  vtep_mac=$(plan_field vtep 3)
  vtep_prefix=$(plan_field vtep 4 | cut -d/ -f2)
  vni=$(plan_field vni 2)
  pod_cidr_v6=$(plan_field pod_cidr_v6 2)
  gw_ip6=$(plan_field gateway_v6 2)
  src_ip6=$(plan_field source_pod_v6 2)
}

# mbufs for a file of `packets` frames: net_pcap's infinite_rx copies the
# whole file into the pool at start, and the rings need their share.
pool_for() { echo $(($1 + 32768)); }

# ---------------------------------------------------------------- vhost (PVP)
# The vhost scenario's pods: bench/pvp_traffic plays pod A (sends N
# round-robin flows to pod B's address, 64-byte frames) and pod B (counts what
# arrives) in one process on lcore 0, over two net_virtio_user ports that
# connect to the dataplane's vhost-user sockets (the dataplane is the
# vhost-user server: sluiced's default mode, OVS's dpdkvhostuser ports, the
# floor's net_vhost). Flows differ in UDP source port (and beyond 60,000 in
# source address) and share the destination, pod B (a /32 route).
# Not testpmd flowgen: DPDK 22.11's flowgen varies only the destination
# address (10.254.0.0 → 10.253.0.0 + i, UDP 1000 → 1001, MACs 00:01:02:03:04:00
# → :01, all hard-coded: --tx-ip, --tx-udp and --eth-peer do not apply to it;
# checked by capturing its output with net_pcap), and Sluice routes only pod
# /32s locally (other destinations only as remote pod CIDRs, encapsulated),
# so flowgen's N destinations cannot come back to a pod without a prefix
# route in the dataplane. pvp_traffic's N flows share one destination, so
# both dataplanes hold one megaflow and differ per flow in their EMC/SMC,
# as with real pod traffic to one service. Its addresses are fixed:
# 10.250.0.10 → 10.250.0.11.
vh_cidr=10.250.0.0/24 vh_gw=10.250.0.1
vh_ip_a=10.250.0.10 vh_mac_a=02:53:0a:fa:00:0a  # what pvp_traffic sends from (source validation)
vh_ip_b=10.250.0.11 vh_mac_b=02:00:0a:fa:00:0b
vh_gen_pid=

# Starts the pods in the background; they run until vh_gen_stop (at most
# ten minutes).
vh_gen_start() {  # sock-a sock-b flows gateway-mac
  "$build/bench/pvp_traffic" --sock-a "$1" --sock-b "$2" --gateway-mac "$4" --flows "$3" --warmup 0 \
    --hugepages "${huge:-0}" --seconds 600 >"$work/pvp-gen.out" 2>>"$work/pvp-gen.log" &
  vh_gen_pid=$!
  echo "$vh_gen_pid" >"$work/gen.pid"
}
# Waits until the dataplane forwards (EAL start-up, connecting and, for OVS,
# the reconfiguration after a vhost-user device appears take from under a
# second to several on a busy machine): until `probe` prints a count above
# zero, at most 30 s. The warm-up starts after it.
vh_gen_settle() {  # probe command...
  local c
  for _ in $(seq 1 300); do
    c=$("$@" 2>/dev/null)
    [[ ${c:-0} =~ ^[0-9]+$ && ${c:-0} -gt 0 ]] && return 0
    kill -0 "$vh_gen_pid" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}
# Stops the pods (in this shell: `wait` knows only its own children); leaves
# their receive rate over their whole run (Mpps, or "-") in $vh_gen_mpps.
vh_gen_stop() {
  vh_gen_mpps=-
  [[ -n $vh_gen_pid ]] || return 0
  kill -TERM "$vh_gen_pid" 2>/dev/null
  wait "$vh_gen_pid" 2>/dev/null
  # EAL leaves its (empty) runtime directory even with --no-shconf.
  rmdir "/var/run/dpdk/sluice-pods-$vh_gen_pid" 2>/dev/null
  vh_gen_pid=
  rm -f "$work/gen.pid"
  local m
  m=$(sed -n 's/.*"rx_mpps": \([0-9.]*\).*/\1/p' "$work/pvp-gen.out" 2>/dev/null)
  vh_gen_mpps=${m:--}
}

# testpmd's latest count of packets sent toward pod B (port 1).
floor_vhost_sent() {  # log
  awk '/NIC statistics for port/ { port = $(NF - 1) } /TX-packets:/ && port == 1 { n = $2 } END { print n + 0 }' "$1"
}

# The floor of this path: dpdk-testpmd io-forwarding between two net_vhost
# ports (no lookup, no rewrite), the same pods on the other side.
run_floor_vhost() {  # flows
  local log="$work/testpmd.log" pid
  rm -rf "$work/vhost" && mkdir -p "$work/vhost"
  setsid stdbuf -oL dpdk-testpmd -l 0,1 $(eal_mem 1024) --no-pci --file-prefix="$tag-floor" \
    --vdev "net_vhost0,iface=$work/vhost/a.sock,queues=1" --vdev "net_vhost1,iface=$work/vhost/b.sock,queues=1" \
    --log-level=4 -- --no-mlockall --total-num-mbufs=32768 --forward-mode=io --nb-cores=1 -a \
    --record-core-cycles --stats-period 1 >"$log" 2>&1 &
  pid=$!
  echo "$pid" >"$work/testpmd.pid"
  for _ in $(seq 1 300); do
    [[ -S $work/vhost/b.sock ]] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  vh_gen_start "$work/vhost/a.sock" "$work/vhost/b.sock" "$1" 02:00:00:00:00:01
  vh_gen_settle floor_vhost_sent "$log"
  # testpmd prints once a second: count its samples from the end of the
  # warm-up to the end of the measured seconds.
  sleep "$warmup"
  local from to
  from=$(grep -c "NIC statistics for port 1" "$log")
  sleep "$seconds"
  to=$(grep -c "NIC statistics for port 1" "$log")
  vh_gen_stop
  kill -INT "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  rm -f "$work/testpmd.pid"
  # Tx-pps of port 1 (toward pod B) over the measured samples; testpmd's
  # cycles/packet count only polls that received something (busy cycles).
  local mpps cpp
  mpps=$(awk -v from="$from" -v to="$to" '/NIC statistics for port/ { port = $(NF - 1); if (port == 1) k++ }
              /Tx-pps:/ && port == 1 && k > from && k <= to { t += $2; n++ }
              END { if (n) printf "%.3f", t / n / 1e6; else print "-" }' "$log")
  cpp=$(grep -o "CPU cycles/packet=[0-9.]*" "$log" | tail -1 | cut -d= -f2)
  if [[ $mpps == - || -z $cpp ]]; then
    echo "- - - - - - testpmd-failed"
  else
    echo "$mpps $cpp - - - - pods=$vh_gen_mpps"
  fi
}

# ---------------------------------------------------------------- the floor
# dpdk-testpmd io-forwarding pcap → null: no lookup, no rewrite.
run_floor() {  # scenario pcap packets
  local pcap=$2 packets=$3 log="$work/testpmd.log" pid
  setsid stdbuf -oL dpdk-testpmd -l 0,1 $(eal_mem 2048) --no-pci --file-prefix="$tag-floor" \
    --vdev "net_pcap0,rx_pcap=$pcap,infinite_rx=1" --vdev "net_null0,no-rx=1" --log-level=4 -- \
    --no-mlockall --total-num-mbufs="$(pool_for "$packets")" ${jumbo:+--mbuf-size=$((9216 + 128))} \
    --forward-mode=io --nb-cores=1 -a --record-core-cycles --stats-period 1 >"$log" 2>&1 &
  pid=$!
  echo "$pid" >"$work/testpmd.pid"  # runners run in subshells: cleanup finds it here
  # Loading a large file into the pool takes a while: time from the start of
  # forwarding, not from the start of the process.
  for _ in $(seq 1 600); do
    grep -q "start packet forwarding" "$log" 2>/dev/null && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  sleep $((warmup + seconds))
  kill -INT "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  rm -f "$work/testpmd.pid"
  # The last `seconds` one-second Tx-pps samples of the null port (port 1).
  local mpps cpp
  mpps=$(awk '/NIC statistics for port/ { port = $(NF - 1) }
              /Tx-pps:/ && port == 1 { s[n++] = $2 }
              END { k = 0; for (i = (n > '"$seconds"' ? n - '"$seconds"' : 0); i < n; i++) { t += s[i]; k++ }
                    if (k) printf "%.3f", t / k / 1e6; else print "-" }' "$log")
  cpp=$(grep -o "CPU cycles/packet=[0-9.]*" "$log" | tail -1 | cut -d= -f2)
  if [[ $mpps == - || -z $cpp ]]; then
    echo "- - - - - - testpmd-failed"
  else
    echo "$mpps $cpp - - - - ok"
  fi
}

# ---------------------------------------------------------------- Sluice
ctl() { "$build/dataplane/sluicectl" --socket "$work/api.sock" "$@"; }
sluiced_pid=

sluiced_sent() { ctl stats 2>/dev/null | awk '/packets sent:/ { print $3; exit }'; }

stop_sluiced() {
  [[ -n $sluiced_pid ]] || return 0
  kill -TERM "$sluiced_pid" 2>/dev/null
  wait "$sluiced_pid" 2>/dev/null
  sluiced_pid=
  rm -f "$work/sluiced.pid"
}

# A free TCP port on loopback (the kernel picks it; nothing holds it after).
free_tcp_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# The metrics scraper: GET /metrics once a second, as Prometheus would with
# a 1 s scrape interval; each successful scrape adds a line to scrapes.txt.
scraper_start() {  # port
  : >"$work/scrapes.txt"
  setsid bash -c 'while :; do curl -sf -o /dev/null "http://127.0.0.1:$1/metrics" && echo ok >>"$2"; sleep 1; done' \
    scraper "$1" "$work/scrapes.txt" >/dev/null 2>&1 &
  echo $! >"$work/scraper.pid"
}
scraper_stop() {  # prints how many scrapes succeeded
  [[ -f $work/scraper.pid ]] || { echo 0; return; }
  kill -TERM -- "-$(cat "$work/scraper.pid")" 2>/dev/null
  rm -f "$work/scraper.pid"
  wc -l <"$work/scrapes.txt"
}

# For the caller's exit trap: runners run in subshells ($(...)), so what they
# started is found through the pid files they leave while it runs.
stop_leftovers() {
  local f p
  [[ -f $work/scraper.pid ]] && scraper_stop >/dev/null
  for f in "$work/gen.pid" "$work/sluiced.pid" "$work/testpmd.pid"; do
    [[ -f $f ]] || continue
    p=$(cat "$f")
    kill -TERM "$p" 2>/dev/null
    for _ in $(seq 1 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null
    rm -f "$f"
  done
  ovs_stop
}

# The overlay part of sluiced's config: our VTEP on `uplink_devargs`, the
# remote nodes with their VTEP MACs as static neighbours (nothing to ARP for).
sluice_overlay_json() {  # uplink_devargs
  local k nodes="" neigh=""
  for ((k = 0; k < remotes; k++)); do
    nodes+="${nodes:+,}{\"name\": \"node-$k\", \"vtep\": \"$(plan_remote $k 3)\", \"pod-cidrs\": [\"$(plan_remote $k 5)\"], \"mac\": \"$(plan_remote $k 4)\"}"
    neigh+="${neigh:+,}{\"ip\": \"$(plan_remote $k 3)\", \"mac\": \"$(plan_remote $k 4)\"}"
  done
  cat <<EOF
{"uplink": {"devargs": "$1", "vtep": "$vtep_ip/$vtep_prefix", "mac": "$vtep_mac", "static-neighbors": [$neigh]},
 "vni": $vni, "remote-nodes": [$nodes]}
EOF
}

# offload: "software" runs sluiced with partial offload's software flow
# engine marking the input pod port's packets (l3 only): the
# engine's rx callback stands in for a NIC, so its own cost is part of the
# figure (sluicectl stats shows it).
# $sluiced: the binary under test (node_bench.sh's sluice-base system sets
# it to --base-sluiced's, to compare two builds in the same rounds).
run_sluice() {  # scenario pcap|flows(vhost) packets [offload]
  local scenario=$1 pcap=$2 packets=$3 offload=${4:-} k extra=()
  local sluiced=${sluiced:-$build/dataplane/sluiced}
  # A pod port's pcap input must lie below <state-dir>/vdev (sluiced reads
  # no other file for a vdev port): the run's input is linked there.
  local input="net_pcap,rx_pcap=$work/state/vdev/input.pcap,infinite_rx=1"
  local cidr=$pod_cidr gw=$gw_ip
  [[ $scenario == vhost ]] && cidr=$vh_cidr gw=$vh_gw
  case $scenario in
    decap) sluice_overlay_json "net_pcap_${tag}up,rx_pcap=$pcap,infinite_rx=1" >"$work/sluiced.json" ;;
    encap) sluice_overlay_json "net_null_${tag}up,no-rx=1" >"$work/sluiced.json" ;;
    *) echo '{}' >"$work/sluiced.json" ;;
  esac
  # l3v6: the same pods and source pod, dual-stack (one port each, as a
  # dual-stack CNI attachment), sending IPv6.
  local v6=()
  if [[ $scenario == l3v6 ]]; then
    extra+=(--pod-cidr-v6 "$pod_cidr_v6" --gateway-v6 "$gw_ip6")
  fi
  # node_bench.sh --frame-size 9000: ports of MTU 9216, and buffers that
  # hold the input's frames whole (net_pcap's infinite_rx copies only a
  # preloaded frame's first segment).
  [[ -n ${jumbo:-} ]] && extra+=(--port-mtu 9216 --mbuf-size 9216)
  if [[ -n $offload ]]; then
    # l3: marks on the source pod's port; decap: on the uplink (sluiced's
    # default without --offload-port: decap megaflows become tunnel rules).
    # Encap megaflows are not offloaded (their action needs the inner hash),
    # nor is vhost's input a port the engine serves here.
    case $scenario in
      l3) extra+=(--offload-provider "$offload" --offload-port nb-src/net1) ;;
      decap) extra+=(--offload-provider "$offload") ;;
      *) echo "- - - - - - skipped:offload-marks-l3-decap-only"; return ;;
    esac
  fi
  # $metrics_scrape (the sluice-scraped system): the metrics endpoint on a
  # loopback port, read once a second by curl for the whole run (a
  # Prometheus scrape of 1 s), to compare with sluice's unscraped rounds.
  local metrics_port=
  if [[ -n ${metrics_scrape:-} ]]; then
    metrics_port=$(free_tcp_port)
    extra+=(--metrics-address 127.0.0.1 --metrics-port "$metrics_port")
  fi
  # The checkpoint goes to the run's directory, never the node's.
  if "$sluiced" --help 2>&1 | grep -q -- --state-dir; then extra+=(--state-dir "$work/state"); fi
  rm -rf "$work/vhost" "$work/state" && mkdir -p "$work/state/vdev"
  [[ $scenario == vhost || $scenario == decap ]] || ln -f "$pcap" "$work/state/vdev/input.pcap" 2>/dev/null ||
    cp "$pcap" "$work/state/vdev/input.pcap"
  setsid "$sluiced" --config "$work/sluiced.json" --api-socket "$work/api.sock" --socket-dir "$work/vhost" \
    --pod-cidr "$cidr" --gateway "$gw" --gateway-mac "$gw_mac" --main-core 0 --pmd-cores 1 \
    --mbufs "$(pool_for "$packets")" --allow-vdev-ports true "${extra[@]}" \
    --eal "$(eal_mem 2048) --no-pci --file-prefix=$tag-sluiced" >>"$work/sluiced.log" 2>&1 &
  sluiced_pid=$!
  echo "$sluiced_pid" >"$work/sluiced.pid"
  local up=
  for _ in $(seq 1 300); do
    if ctl health >/dev/null 2>&1; then up=1; break; fi
    kill -0 "$sluiced_pid" 2>/dev/null || break
    sleep 0.1
  done
  if [[ -z $up ]]; then
    stop_sluiced
    echo "- - - - - - sluiced-did-not-start"
    return
  fi
  if [[ -n $metrics_port ]]; then scraper_start "$metrics_port"; fi
  # Pods (null sinks) first, so the input's first packets find their routes.
  local ok=1 why=port-add-refused
  # no_source_validation=1 (system sluice-nosrcval): every pod port as a
  # router's, its sources unchecked; otherwise checked (the default), and
  # the traffic carries each sending pod's own MAC and addresses.
  local srcval=()
  [[ -n ${no_source_validation:-} ]] && srcval=(--no-source-validation)
  if [[ $scenario == vhost ]]; then
    # Two vhost-user pod ports (sluiced serves the sockets), then the pods.
    ctl port add --container-id nb-vhost-a --ifname net1 --ip "$vh_ip_a" --mac "$vh_mac_a" --socket-subdir nb-vhost-a \
      --mode server "${srcval[@]}" >>"$work/sluicectl.log" 2>&1 || ok=
    ctl port add --container-id nb-vhost-b --ifname net1 --ip "$vh_ip_b" --mac "$vh_mac_b" --socket-subdir nb-vhost-b \
      --mode server "${srcval[@]}" >>"$work/sluicectl.log" 2>&1 || ok=
    if [[ -n $ok ]]; then
      vh_gen_start "$work/vhost/nb-vhost-a/net1.sock" "$work/vhost/nb-vhost-b/net1.sock" "$pcap" "$gw_mac"
      vh_gen_settle sluiced_sent || { ok= why=no-traffic; }
    fi
  elif [[ $scenario != encap ]]; then
    for ((k = 0; k < pods; k++)); do
      [[ $scenario == l3v6 ]] && v6=(--ipv6 "$(plan_pod $k 6)")
      ctl port add --container-id "nb-pod$k" --ifname net1 --ip "$(plan_pod $k 3)" --mac "$(plan_pod $k 4)" \
        "${v6[@]}" "${srcval[@]}" --devargs "net_null,no-rx=1" >>"$work/sluicectl.log" 2>&1 || ok=
    done
  fi
  if [[ $scenario != decap && $scenario != vhost ]]; then
    [[ $scenario == l3v6 ]] && v6=(--ipv6 "$src_ip6")
    ctl port add --container-id nb-src --ifname net1 --ip "$src_ip" --mac "$src_mac" "${v6[@]}" "${srcval[@]}" \
      --devargs "$input" \
      >>"$work/sluicectl.log" 2>&1 || ok=
  fi
  if [[ -z $ok ]]; then
    vh_gen_stop
    stop_sluiced
    echo "- - - - - - $why"
    return
  fi
  sleep "$warmup"
  # capture=1 (system sluice-capture): packet capture of every packet the
  # source pod's port (decap: the uplink) receives, to /dev/null, while the
  # counters run; what the capture ring cannot keep is dropped and counted.
  local capture_pid=
  if [[ -n ${capture:-} ]]; then
    local src_port
    src_port=$(ctl --json stats | python3 -c '
import json, sys
ports = json.load(sys.stdin)["ports"]
want = "nb-src" if sys.argv[1] != "decap" else ""
print(next(p["port_no"] for p in ports if p.get("attachment", {}).get("container_id", "") == want))' "$scenario")
    ctl capture "$src_port" --direction rx -w /dev/null 2>>"$work/sluicectl.log" &
    capture_pid=$!
  fi
  ctl stats clear >/dev/null
  sleep "$seconds"
  ctl stats >"$work/sluice-stats.txt"
  if [[ -n $capture_pid ]]; then kill "$capture_pid" 2>/dev/null; wait "$capture_pid" 2>/dev/null; fi
  local pods=
  if [[ $scenario == vhost ]]; then vh_gen_stop; pods=",pods=$vh_gen_mpps"; fi
  local scrapes=
  if [[ -n $metrics_port ]]; then scrapes=",scrapes=$(scraper_stop)"; fi
  stop_sluiced
  # Mpps: packets sent over the interval the counters cover (the received
  # rate, timed by the PMD's own cycle count, scaled by sent/received); the
  # PMD's busy cycles per packet received; where lookups were resolved.
  awk '
    function pct(line) { sub(/.*\( */, "", line); sub(/ *%\).*/, "", line); return line }
    /packets received:/ { rx = $3; rate = $4; sub(/\(/, "", rate) }
    /packets sent:/ { sent = $3 }
    /cycles per packet/ && !cpp { cpp = $4 }
    # Where the cycles went: rx (the port driver: for a pcap port, its copy of
    # every stored frame), parse, lookup, actions, tx; "/" keeps the note one field.
    /cycles\/packet by stage:/ && !stages { stages = $5 "/" $7 "/" $9 "/" $11 "/" $13; gsub(/,/, "", stages) }
    # Exact matches: same-flow run hits (a run of packets with one key,
    # resolved with its first) plus EMC hits; the runs alone go in the note.
    /- same-flow run hits/ { runs = pct($0) }
    /- EMC hits/ { emc = pct($0) + runs } /- SMC hits/ { smc = pct($0) }
    /- megaflow hits/ { mf = pct($0) } /- misses:/ { miss = pct($0) }
    /- mark hits/ { marks = pct($0) }
    # The software engine times its own matching inside the rx callback (part
    # of the busy cycles): what a NIC would do for free.
    /software engine:/ { engine = $3 }
    /^Drops by reason/ { in_drops = 1; next }
    # vhost: a pod B slower than the dataplane refuses packets (its ring is
    # full): a limit of the pod, noted apart, not a misconfiguration.
    in_drops && NF == 2 && pods != "" && $1 == "tx_queue_full" { podfull = $2; next }
    in_drops && NF == 2 { drops += $2 }
    /^$/ { in_drops = 0 }
    END { note = (drops > 0 ? "drops=" drops : "ok") pods (podfull > 0 ? ",podfull=" podfull : "")
          if (runs != "") note = note ",runs=" runs "%"
          if (marks != "") note = note ",marks=" marks "%"
          if (engine != "") note = note ",engine=" engine
          if (stages != "") note = note ",stages=" stages
          note = note scrapes
          if (rx > 0) printf "%.3f %s %s %s %s %s %s\n", rate * sent / rx, cpp, emc, smc, mf, miss, note
          else print "- - - - - - no-stats" }' pods="$pods" scrapes="$scrapes" "$work/sluice-stats.txt"
}

# ---------------------------------------------------------------- Open vSwitch
ovs_dir="$work/ovs"
ovs_ns="$tag-ovs"
vsctl() { ovs-vsctl --db="unix:$ovs_dir/db.sock" --timeout=60 "$@"; }
appctl() { ovs-appctl -t "$ovs_dir/ovs-vswitchd.ctl" "$@"; }
ofctl() { OVS_RUNDIR=$ovs_dir ovs-ofctl "$@"; }

ovs_available() { [[ -x $ovs_vswitchd ]] && command -v ovsdb-server >/dev/null && command -v ovs-vsctl >/dev/null; }

# A private Open vSwitch: its own database, run/log directory and unixctl
# sockets, ovs-vswitchd in its own network namespace (the netdev bridges'
# tap ports live and die there). Never the system service.
ovs_start() {  # smc: true|false
  ovs_stop
  rm -rf "$ovs_dir" && mkdir -p "$ovs_dir"
  export OVS_RUNDIR=$ovs_dir OVS_DBDIR=$ovs_dir OVS_LOGDIR=$ovs_dir
  ovsdb-tool create "$ovs_dir/conf.db" /usr/share/openvswitch/vswitch.ovsschema || return 1
  ovsdb-server "$ovs_dir/conf.db" --remote="punix:$ovs_dir/db.sock" --pidfile="$ovs_dir/ovsdb-server.pid" \
    --log-file="$ovs_dir/ovsdb-server.log" --unixctl="$ovs_dir/ovsdb-server.ctl" --detach || return 1
  vsctl --no-wait init
  # OVS adds --in-memory itself; without hugepages it needs --no-huge
  # --no-shconf --legacy-mem, and -m 2048 either way (with less it silently
  # halves its mbuf pool).
  local mem="--no-huge -m 2048 --no-shconf --legacy-mem"
  [[ -n ${huge:-} ]] && mem="-m 2048"
  vsctl --no-wait set Open_vSwitch . other_config:dpdk-init=true \
    "other_config:dpdk-extra=$mem --no-pci --file-prefix=$tag-ovs" \
    other_config:pmd-cpu-mask=0x2 other_config:dpdk-lcore-mask=0x1 "other_config:smc-enable=$1"
  ip netns add "$ovs_ns" || return 1
  ip netns exec "$ovs_ns" "$ovs_vswitchd" "unix:$ovs_dir/db.sock" --pidfile="$ovs_dir/ovs-vswitchd.pid" --detach \
    --log-file="$ovs_dir/ovs-vswitchd.log" --unixctl="$ovs_dir/ovs-vswitchd.ctl" || return 1
  for _ in $(seq 1 300); do
    [[ $(vsctl get Open_vSwitch . dpdk_initialized 2>/dev/null) == true ]] && return 0
    sleep 0.1
  done
  return 1
}

ovs_stop() {
  # No --cleanup: it takes about 2 s to remove every port and bridge one by
  # one, and all of them (database, sockets, namespace) go with the run anyway.
  if [[ -S $ovs_dir/ovs-vswitchd.ctl ]]; then appctl exit >/dev/null 2>&1 || true; fi
  if [[ -S $ovs_dir/ovsdb-server.ctl ]]; then ovs-appctl -t "$ovs_dir/ovsdb-server.ctl" exit >/dev/null 2>&1 || true; fi
  # If they did not exit on request, their own pid files say whom to stop.
  local f p
  for f in ovs-vswitchd ovsdb-server; do
    if [[ -f $ovs_dir/$f.pid ]]; then
      p=$(cat "$ovs_dir/$f.pid" 2>/dev/null)
      for _ in $(seq 1 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
      if [[ -n $p ]] && kill -0 "$p" 2>/dev/null; then kill -KILL "$p" 2>/dev/null || true; fi
      rm -f "$ovs_dir/$f.pid"
    fi
  done
  ip netns del "$ovs_ns" 2>/dev/null || true
}

dpdk_port() {  # bridge name ofport devargs
  echo -- add-port "$1" "$2" -- set Interface "$2" type=dpdk "options:dpdk-devargs=\"$4\"" "ofport_request=$3" \
    ${jumbo:+mtu_request=9216}
}

# Bridges and OpenFlow rules as a CNI would program them. Rules go in
# before the input port exists, so no packet meets the default NORMAL flow.
ovs_configure() {  # scenario pcap
  local scenario=$1 pcap=$2 k
  local input="net_pcap_${tag},rx_pcap=$pcap,infinite_rx=1"
  local l3_rules=()  # pod k's /24 → gateway MAC, pod MAC, TTL - 1, port 10+k
  for ((k = 0; k < pods; k++)); do
    l3_rules+=("priority=100,ip,nw_dst=$(plan_pod $k 5),actions=mod_dl_src:$gw_mac,mod_dl_dst:$(plan_pod $k 4),dec_ttl,output:$((10 + k))")
  done
  local l3v6_rules=()  # pod k's /128 → the same rewrite over IPv6 (hop limit - 1)
  for ((k = 0; k < pods; k++)); do
    l3v6_rules+=("priority=100,ipv6,ipv6_dst=$(plan_pod $k 6)/128,actions=mod_dl_src:$gw_mac,mod_dl_dst:$(plan_pod $k 4),dec_ttl,output:$((10 + k))")
  done
  local pod_ports=()
  for ((k = 0; k < pods; k++)); do
    read -ra p < <(dpdk_port br-int "pod$k" $((10 + k)) "net_null_${tag}p$k,no-rx=1")
    pod_ports+=("${p[@]}")
  done
  vsctl add-br br-int -- set bridge br-int datapath_type=netdev fail_mode=secure || return 1
  ofctl del-flows br-int
  case $scenario in
    vhost)
      # Pod B's /32 → gateway MAC, pod B's MAC, TTL - 1, its port; the pods'
      # ports are vhost-user servers (sockets in the run directory, OVS's
      # default vhost-sock-dir), like sluiced's.
      ofctl add-flow br-int "priority=100,ip,nw_dst=$vh_ip_b,actions=mod_dl_src:$gw_mac,mod_dl_dst:$vh_mac_b,dec_ttl,output:2" || return 1
      vsctl add-port br-int pod-a -- set Interface pod-a type=dpdkvhostuser ofport_request=1 \
        -- add-port br-int pod-b -- set Interface pod-b type=dpdkvhostuser ofport_request=2 || return 1
      ;;
    l3|l3v6)
      if [[ $scenario == l3 ]]; then
        for r in "${l3_rules[@]}"; do ofctl add-flow br-int "$r" || return 1; done
      else
        for r in "${l3v6_rules[@]}"; do ofctl add-flow br-int "$r" || return 1; done
      fi
      vsctl "${pod_ports[@]}" || return 1
      read -ra p < <(dpdk_port br-int in0 1 "$input")
      vsctl "${p[@]}" || return 1
      ;;
    decap|encap)
      # The usual userspace-tunnel set-up: br-phy holds the uplink and our
      # VTEP address (on its internal port, in the namespace); br-int holds
      # the pods and a flow-based VXLAN port. br-phy passes the uplink's
      # packets to its internal port, where OVS terminates the tunnel.
      vsctl add-br br-phy -- set bridge br-phy datapath_type=netdev fail_mode=secure \
        "other-config:hwaddr=\"$vtep_mac\"" || return 1
      vsctl add-port br-int vxlan0 -- set Interface vxlan0 type=vxlan options:remote_ip=flow \
        "options:key=$vni" "options:local_ip=$vtep_ip" ofport_request=2 || return 1
      ip netns exec "$ovs_ns" ip link set br-phy address "$vtep_mac"
      ip netns exec "$ovs_ns" ip addr add "$vtep_ip/$vtep_prefix" dev br-phy
      ip netns exec "$ovs_ns" ip link set br-phy up
      ofctl del-flows br-phy
      ofctl add-flow br-phy "priority=100,in_port=1,actions=LOCAL" || return 1
      ofctl add-flow br-phy "priority=100,in_port=LOCAL,actions=output:1" || return 1
      for ((k = 0; k < remotes; k++)); do appctl tnl/neigh/set br-phy "$(plan_remote $k 3)" "$(plan_remote $k 4)" >/dev/null; done
      if [[ $scenario == decap ]]; then
        for r in "${l3_rules[@]}"; do ofctl add-flow br-int "in_port=2,$r" || return 1; done
        vsctl "${pod_ports[@]}" || return 1
        read -ra p < <(dpdk_port br-phy up0 1 "$input")
        vsctl "${p[@]}" || return 1
      else
        # Remote pod CIDR k → inner MACs as toward node k's VTEP device,
        # TTL - 1, tunnel to node k.
        for ((k = 0; k < remotes; k++)); do
          ofctl add-flow br-int "priority=100,ip,nw_dst=$(plan_remote $k 5),actions=mod_dl_src:$gw_mac,mod_dl_dst:$(plan_remote $k 4),dec_ttl,set_field:$(plan_remote $k 3)->tun_dst,output:2" || return 1
        done
        read -ra p < <(dpdk_port br-phy up0 1 "net_null_${tag}up,no-rx=1")
        vsctl "${p[@]}" || return 1
        read -ra p < <(dpdk_port br-int in0 1 "$input")
        vsctl "${p[@]}" || return 1
      fi
      ;;
  esac
}

ovs_sent() { appctl dpif-netdev/pmd-perf-show 2>/dev/null | awk '/^  Tx packets:/ { print $3; exit }'; }

# Packets delivered to pod B's vhost-user port since it was added.
# (dpctl/show -s cannot read a vhost-user port's statistics; OpenFlow can,
# but not its drops: "drop=?".)
ovs_pod_b_tx() {
  ofctl dump-ports br-int 2 2>/dev/null | awk '/tx pkts=/ { v = $0; sub(/.*tx pkts=/, "", v); sub(/,.*/, "", v); print v; exit }'
}

run_ovs() {  # scenario pcap|flows(vhost) packets smc(true|false)
  if ! ovs_available; then
    echo "- - - - - - ovs-not-installed"
    return
  fi
  if ! ovs_start "$4" >>"$work/ovs-start.log" 2>&1; then
    ovs_stop
    echo "- - - - - - ovs-did-not-start"
    return
  fi
  if ! ovs_configure "$1" "$2" >>"$work/ovs-config.log" 2>&1; then
    ovs_stop
    echo "- - - - - - ovs-config-failed"
    return
  fi
  local tx0=0 tx1=0 vhost=
  if [[ $1 == vhost ]]; then
    vhost=1
    vh_gen_start "$ovs_dir/pod-a" "$ovs_dir/pod-b" "$2" "$gw_mac"
    if ! vh_gen_settle ovs_sent; then
      vh_gen_stop
      ovs_stop
      echo "- - - - - - no-traffic"
      return
    fi
  fi
  sleep "$warmup"
  [[ -n $vhost ]] && tx0=$(ovs_pod_b_tx)
  appctl dpif-netdev/pmd-stats-clear >/dev/null
  sleep "$seconds"
  appctl dpif-netdev/pmd-perf-show >"$work/ovs-perf.txt" 2>&1
  [[ -n $vhost ]] && tx1=$(ovs_pod_b_tx)
  appctl dpif-netdev/pmd-stats-show >>"$work/ovs-perf.txt" 2>&1
  # What the datapath did, for reading a figure: its flows and port counters.
  { appctl dpctl/dump-flows -m; appctl dpctl/show -s; } >"$work/ovs-datapath.txt" 2>&1
  local pods=
  local delivered=-
  if [[ -n $vhost ]]; then
    vh_gen_stop
    # What reached pod B (the PMD's Tx count includes what pod B's full
    # ring refused; sluiced counts those as tx_queue_full drops, not sent).
    [[ $tx0 =~ ^[0-9]+$ && $tx1 =~ ^[0-9]+$ ]] && delivered=$((tx1 - tx0))
    pods=",pods=$vh_gen_mpps"
  fi
  ovs_stop
  # Mpps: packets the PMD sent over the measured interval; cycles/packet
  # and tiers as pmd-perf-show gives them (tiers per datapath pass: decap
  # takes two passes per packet).
  awk '
    function pct(line) { sub(/.*\( */, "", line); sub(/ *%.*/, "", line); return line }
    /^Measurement duration:/ { secs = $3 }
    /^  Rx packets:/ { rx = $3; cpp = $0; sub(/.*Kpps, */, "", cpp); sub(/ cycles.*/, "", cpp) }
    /^  Datapath passes:/ { passes = $4; sub(/\(/, "", passes) }
    /^  Tx packets:/ { tx = $3 }
    /- EMC hits:/ { emc = pct($0) } /- SMC hits:/ { smc = pct($0) }
    /- Megaflow hits:/ { mf = pct($0) } /- Upcalls:/ { miss = pct($0) }
    END { # Everything received must have been forwarded (1% allows for
          # packets in flight when the counters were read).
          note = "passes=" passes (tx < rx * 0.99 ? ",lost=" rx - tx : "") pods
          if (delivered != "-") { if (tx - delivered > 0) note = note ",podfull=" tx - delivered; tx = delivered }
          if (secs > 0 && rx > 0)
            printf "%.3f %s %s %s %s %s %s\n", tx / secs / 1e6, cpp, emc, smc, mf, miss, note
          else print "- - - - - - no-stats" }' pods="$pods" delivered="$delivered" "$work/ovs-perf.txt"
}
