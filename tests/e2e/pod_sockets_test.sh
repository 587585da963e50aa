#!/usr/bin/env bash
# Per-pod vhost-user sockets (perPodSockets) end to end: cnitool with
# CNI_ARGS K8S_POD_UID against the real sluiced, on a simulated kubelet
# layout (cniVersion 1.0.0, which Debian's libcni speaks). Each "pod" is a network namespace plus a mount namespace of its own
# in which, as a kubelet and runtime would arrange, the pod's emptyDir
# (<kubeletDir>/pods/<uid>/volumes/kubernetes.io~empty-dir/sluice-sockets)
# is mounted at the in-pod path /var/run/sluice, /run is the pod's own and
# /tmp (which holds the test's kubelet dir and sluiced's socket directory) is
# hidden. Asserted:
#   - ADD links a short name under socketDir to the pod's emptyDir: sluiced's
#     socket path fits sun_path while the emptyDir's own would not; the
#     device-info gives the pod's path and its side (server);
#   - each pod's mount namespace holds its own socket and no other; from pod B
#     neither pod A's socket nor its host path nor the link is reachable, and
#     connecting to any of them fails;
#   - traffic flows pod A → sluiced → pod B through the per-pod sockets
#     (dpdk-testpmd in each pod's namespaces, virtio_user server=1 on the
#     in-pod path; sluiced connects through the link), counted by sluiced on
#     both ports and by pod B's testpmd;
#   - a restarted sluiced restores both ports on the same paths and connects
#     to the pods again;
#   - DEL removes the link and the port, and leaves the pod's emptyDir alone.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_init
[[ -x ${CNITOOL:-} ]] || fail "cnitool not found at '${CNITOOL:-}': run scripts/setup-e2e.sh"
command -v dpdk-testpmd >/dev/null || fail "dpdk-testpmd missing: run scripts/setup.sh"
command -v unshare >/dev/null && command -v nsenter >/dev/null || fail "util-linux unshare/nsenter missing"

kubelet=$work/kubelet
jq --arg k "$kubelet" '. + {kubeletDir: $k}' "$SLUICE_CNI_NODE_CONFIG" >"$work/node.tmp"
mv "$work/node.tmp" "$SLUICE_CNI_NODE_CONFIG"
pod_dir=/var/run/sluice  # podSocketDir's default

start_sluiced 10.250.0.0/24
net=se2e-podsock-$id
# 1.0.0: Debian's libcni (cnitool) stops there; the 1.1.0 result's socketPath
# is the unit tests' (tests/cni/pod_sockets_test.cc), the device-info is here.
write_netconf "$net" 1.0.0 10.250.0.10 10.250.0.11
jq '.plugins[0].perPodSockets = true | .plugins[0].capabilities = {CNIDeviceInfoFile: true}' \
  "$NETCONFPATH/$net.conflist" >"$work/conf.tmp"
mv "$work/conf.tmp" "$NETCONFPATH/$net.conflist"
mkdir -p "$work/devinfo"
export CNI_IFNAME=net1

# Mount namespaces are kept by bind mounts on files, which must not sit on a
# shared mount: a private bind of their directory.
mkdir -p "$work/mntns"
mount --bind "$work/mntns" "$work/mntns"
e2e_cleanups+=("umount -l '$work/mntns'")
mount --make-private "$work/mntns"

# A pod: its UID, the emptyDir the kubelet makes for its volume (mode 0777,
# as the kubelet's), its netns and its mount namespace. Sets uid_<p>,
# vol_<p>, ns_<p>, mnt_<p>.
make_pod() {
  local p=$1 uid vol mnt
  uid=$(cat /proc/sys/kernel/random/uuid)
  vol=$kubelet/pods/$uid/volumes/kubernetes.io~empty-dir/sluice-sockets
  mkdir -p "$vol"
  chmod 0777 "$vol"
  new_netns "$p" "ns_$p"
  mnt=$work/mntns/$p
  touch "$mnt"
  unshare --mount="$mnt" --propagation private sh -ec "
    mount -t tmpfs -o mode=0755 pod-run /run
    mkdir -p $pod_dir
    mount --bind '$vol' $pod_dir
    mount -t tmpfs -o mode=1777 pod-tmp /tmp"
  e2e_cleanups+=("umount '$mnt'")
  printf -v "uid_$p" '%s' "$uid"
  printf -v "vol_$p" '%s' "$vol"
  printf -v "mnt_$p" '%s' "$mnt"
}
in_pod() {  # pod command... (in the pod's mount and network namespaces)
  local mnt="mnt_$1" ns="ns_$1"
  shift
  nsenter --mount="${!mnt}" --net="${!ns}" -- "$@"
}
# Exit status 0 only if a unix stream connect to $2 succeeds from pod $1.
connect_from() {
  in_pod "$1" /usr/bin/python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect(sys.argv[1])
except OSError as e:
    print(e, file=sys.stderr)
    sys.exit(1)' "$2"
}
add_pod() {  # pod → result on stdout
  local uid="uid_$1" ns="ns_$1" cid
  cid=$(cnitool_container_id "${!ns}")
  CNI_ARGS="IgnoreUnknown=1;K8S_POD_NAMESPACE=e2e;K8S_POD_NAME=pod-$1;K8S_POD_UID=${!uid}" \
    CAP_ARGS="{\"CNIDeviceInfoFile\":\"$work/devinfo/$cid-net1.json\"}" "$CNITOOL" add "$net" "${!ns}"
}
del_pod() {
  local uid="uid_$1" ns="ns_$1"
  CNI_ARGS="IgnoreUnknown=1;K8S_POD_NAMESPACE=e2e;K8S_POD_NAME=pod-$1;K8S_POD_UID=${!uid}" \
    "$CNITOOL" del "$net" "${!ns}"
}

make_pod a
make_pod b
res_a=$(add_pod a) || fail "cnitool add (pod A) failed: $res_a"
e2e_cleanups+=("del_pod a")
res_b=$(add_pod b) || fail "cnitool add (pod B) failed: $res_b"
e2e_cleanups+=("del_pod b")

# --- the link, the short path and what the pod is told
for p in a b; do
  ns="ns_$p" vol="vol_$p" res="res_$p"
  cid=$(cnitool_container_id "${!ns}")
  port=$(port_of "$cid" net1)
  [[ -n $port ]] || fail "pod $p: no port after ADD: $(ctl ports)"
  sock=$(jq -r .socket_path <<<"$port")
  link=$(dirname "$sock")
  [[ $link == "$work/vhost/"* ]] || fail "pod $p: sluiced's socket $sock is not below socketDir"
  [[ -L $link && $(readlink "$link") == "${!vol}" ]] || fail "pod $p: $link is not a link to ${!vol}"
  ((${#sock} <= 107)) || fail "pod $p: sluiced's socket path ${#sock} bytes long"
  long="${!vol}/net1.sock"
  ((${#long} > 107)) || fail "the test's emptyDir path ($long) should not fit sun_path, or it proves nothing"
  assert_jq "${!res}" '.interfaces[0].name == "net1"' "pod $p: result names the interface"
  info=$(cat "$work/devinfo/$cid-net1.json")
  assert_jq "$info" ".\"vhost-user\".path == \"$pod_dir/net1.sock\" and .\"vhost-user\".mode == \"server\"" \
    "pod $p: device-info gives the in-pod path and that the pod listens"
  printf -v "sock_$p" '%s' "$sock"
  printf -v "link_$p" '%s' "$link"
  printf -v "no_$p" '%s' "$(jq -r .port_no <<<"$port")"
  printf -v "mac_$p" '%s' "$(jq -r .mac <<<"$port")"
done

# --- the pods' DPDK side: a testpmd in each pod's namespaces, listening on the
# in-pod path (sluiced is the vhost-user client and connects through the link).
# Pod A replays frames to pod B from a pcap in its own volume; pod B only
# receives. Both share CPU 0, niced, so that sluiced's PMD keeps core 1.
gw_mac=$(ctl --json health | jq -r .gateway_mac)
[[ $gw_mac =~ ^([0-9a-f]{2}:){5}[0-9a-f]{2}$ ]] || fail "no gateway MAC from sluicectl health: '$gw_mac'"
write_udp_pcap "$vol_a/a_to_b.pcap" "$gw_mac" "$mac_a"
start_testpmd() {  # pod forward-mode vdev-args...
  local p=$1 fwd=$2
  shift 2
  mkfifo "$work/testpmd-$p.in"
  # shellcheck disable=SC2094
  in_pod "$p" stdbuf -oL nice -n 10 dpdk-testpmd --lcores 0@0,1@0 --no-huge --no-pci -m 256 --no-shconf \
    --file-prefix="se2e-podsock-$p-$id" "$@" --log-level=4 \
    -- -i --no-mlockall --total-num-mbufs=8192 --port-topology=chained --forward-mode="$fwd" \
    <"$work/testpmd-$p.in" >"$work/testpmd-$p.log" 2>&1 &
  e2e_pids+=($!)
  local fd
  exec {fd}>"$work/testpmd-$p.in"
  e2e_cleanups+=("exec $fd>&-")
  printf -v "tp_fd_$p" '%s' "$fd"
}
tp() { local fd="tp_fd_$1"; shift; echo "$*" >&"${!fd}"; }
start_testpmd b rxonly --vdev "net_virtio_user0,path=$pod_dir/net1.sock,server=1,mac=$mac_b,queues=1,queue_size=1024"
start_testpmd a io --vdev "net_pcap0,rx_pcap=$pod_dir/a_to_b.pcap,infinite_rx=1" \
  --vdev "net_virtio_user1,path=$pod_dir/net1.sock,server=1,mac=$mac_a,queues=1,queue_size=1024"
both_links_up() { [[ $(ctl --json ports | jq '[.ports[] | select(.link_up)] | length') == 2 ]]; }
wait_until 60 both_links_up ||
  fail "sluiced did not connect to the pods' sockets: $(ctl ports; tail -5 "$work"/testpmd-*.log)"

# --- isolation: each pod's namespace holds its own socket and no other
for p in a b; do
  vol="vol_$p"
  [[ $(in_pod "$p" find "$pod_dir" -type s) == "$pod_dir/net1.sock" ]] ||
    fail "pod $p: sockets in $pod_dir: $(in_pod "$p" ls -la "$pod_dir")"
  # The in-pod socket is the file in this pod's own emptyDir.
  [[ $(in_pod "$p" stat -c %d:%i "$pod_dir/net1.sock") == $(stat -c %d:%i "${!vol}/net1.sock") ]] ||
    fail "pod $p: its socket is not the one in its emptyDir"
done
[[ $(stat -c %i "$vol_a/net1.sock") != $(stat -c %i "$vol_b/net1.sock") ]] || fail "the pods share a socket"
# From pod B: pod A's socket by its host path, through sluiced's link, and the
# test's whole kubelet dir and socket dir are not there at all.
for path in "$vol_a/net1.sock" "$vol_a" "$sock_a" "$link_a" "$kubelet" "$work/vhost"; do
  ! in_pod b test -e "$path" || fail "pod B sees $path"
  ! connect_from b "$path" 2>/dev/null || fail "pod B connected to $path"
done
# ...while on the host (sluiced's view) pod A's socket is there and listening.
[[ -S $sock_a ]] || fail "pod A's socket is not reachable through the link from the host"
# Pod B's own socket, by its in-pod path, is the only one it can reach.
[[ $(in_pod b find "$pod_dir" -type s | wc -l) == 1 ]] || fail "pod B reaches more than its own socket"

# --- traffic: pod A → sluiced → pod B through the per-pod sockets
ctl stats clear >/dev/null
tp b start
tp a start
sl_port() {  # stats-json port field
  jq -r --argjson p "$2" --arg f "$3" '[.ports[] | select(.port_no == $p) | .[$f] // 0 | tonumber] | add // 0' <<<"$1"
}
b_received() { (($(sl_port "$(ctl --json stats)" "$no_b" tx_packets) > 0)); }
wait_until 30 b_received || fail "no traffic reached pod B: $(ctl stats; tail -20 "$work"/testpmd-*.log)"
tp a stop
# Pod B's testpmd counts what it received; asked after sluiced's count settles.
stats=$(ctl --json stats)
rx_a=$(sl_port "$stats" "$no_a" rx_packets)
tx_b=$(sl_port "$stats" "$no_b" tx_packets)
note "sluiced: pod A's port $no_a rx $rx_a, pod B's port $no_b tx $tx_b"
((rx_a > 0)) || fail "sluiced received nothing on pod A's port: $stats"
off=$(stat -c %s "$work/testpmd-b.log")
tp b "show port stats 0"
b_stats() { tail -c +$((off + 1)) "$work/testpmd-b.log" | grep -q 'Tx-pps'; }
wait_until 20 b_stats || fail "pod B's testpmd printed no stats: $(tail -20 "$work/testpmd-b.log")"
rx_tp_b=$(tail -c +$((off + 1)) "$work/testpmd-b.log" | awk '/RX-packets:/ {print $2; exit}')
note "pod B's testpmd: RX-packets $rx_tp_b"
((${rx_tp_b:-0} > 0)) || fail "pod B's application received nothing: $(tail -20 "$work/testpmd-b.log")"
tp b stop

# --- sluiced killed and restarted: its checkpoint brings both ports back on
# the same short paths, through the links (they live in socketDir on the
# host), and it connects to the pods' sockets again. testpmd, as a vhost-user
# server, accepts the new connection once it has seen the link go down: asking
# it for the port's info reads the link status.
kill -KILL "$sluiced_pid"
wait "$sluiced_pid" 2>/dev/null || true
start_sluiced 10.250.0.0/24
for p in a b; do
  ns="ns_$p" sock="sock_$p" link="link_$p"
  port=$(port_of "$(cnitool_container_id "${!ns}")" net1)
  [[ -n $port ]] || fail "pod $p: port not restored: $(ctl ports; tail -20 "$work/sluiced.log")"
  assert_jq "$port" ".socket_path == \"${!sock}\"" "pod $p: restored on the same socket path"
  [[ -L ${!link} ]] || fail "pod $p: link gone after the restart"
done
reconnected() {
  tp a "show port info all"
  tp b "show port info all"
  both_links_up
}
wait_until 60 reconnected || fail "sluiced did not reconnect to the pods after its restart: $(ctl ports)"

# --- DEL removes the link (not the pod's volume) and the port
tp a quit
tp b quit
out=$(del_pod a 2>&1) || fail "cnitool del (pod A) failed: $out"
out=$(del_pod b 2>&1) || fail "cnitool del (pod B) failed: $out"
for p in a b; do
  link="link_$p" vol="vol_$p"
  [[ ! -L ${!link} && ! -e ${!link} ]] || fail "pod $p: link ${!link} left after DEL"
  [[ -d ${!vol} ]] || fail "pod $p: DEL removed the pod's emptyDir (the kubelet's to remove)"
done
[[ $(port_count) == 0 ]] || fail "ports left after DEL: $(ctl ports)"
[[ -z $(ls -A "$work/vhost") ]] || fail "socketDir not empty after DEL: $(ls -la "$work/vhost")"
echo "PASS"
