#!/usr/bin/env bash
# Two nodes, dual-stack pods attached by cnitool, traffic through the VXLAN
# overlay between them:
#   - two sluiced (node a: 10.250.0.0/24 + fd00:250::/64, node b:
#     10.250.1.0/24 + fd00:250:1::/64), their uplinks (net_af_packet) joined by
#     a veth pair, each with the other in its remote-node table;
#   - on each node, cnitool ADDs a pod with host-local dual-stack IPAM;
#   - each pod is a kernel pod: a dpdk-testpmd in the pod's netns forwards
#     between a virtio_user port on the pod's vhost-user socket and a TAP
#     interface named as the CNI interface, which gets the result's MAC,
#     addresses and default routes; the pod's own kernel then speaks ARP,
#     neighbor discovery and ICMP with sluiced, as a pod's stack would;
#   - node a answers router solicitations (ipv6-router-lifetime): pod a's
#     kernel installs the gateway's link-local address as a default router
#     from the advertisement; node b does not (its drops count them);
#   - each pod pings the other over IPv4 and IPv6: every echo answered with
#     the payload sent, and each node's tunnel counts exactly the echo
#     requests and replies both ways;
#   - DEL on both nodes leaves no port.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_init
[[ -x ${CNITOOL:-} ]] || fail "cnitool not found at '${CNITOOL:-}': run scripts/setup-e2e.sh"
command -v dpdk-testpmd >/dev/null || fail "dpdk-testpmd missing: run scripts/setup.sh"
command -v ping >/dev/null || fail "ping missing: run scripts/setup-e2e.sh"

pings=3
# Names of at most 15 bytes: the veth ends carry the work directory's id.
uplink_a=sov${id}a
uplink_b=sov${id}b
ip link add "$uplink_a" type veth peer name "$uplink_b"
e2e_cleanups+=("ip link del '$uplink_a'")
ip link set "$uplink_a" up
ip link set "$uplink_b" up

cidr_a=10.250.0.0/24 cidr6_a=fd00:250::/64 vtep_a=192.168.250.1
cidr_b=10.250.1.0/24 cidr6_b=fd00:250:1::/64 vtep_b=192.168.250.2
export CNI_IFNAME=net1

# Starts node $1: its sluiced with the uplink $2, VTEP $3, pod CIDRs $4 and $5,
# and the other node ($6: name, VTEP, CIDR, IPv6 CIDR) as its remote node; then
# its network config (hosts .10 to .19 of its IPv4 CIDR, its IPv6 CIDR).
start_node() {
  local n=$1 uplink=$2 vtep=$3 cidr=$4 cidr6=$5 peer=$6 peer_vtep=$7 peer_cidr=$8 peer_cidr6=$9 ra=()
  [[ $n == a ]] && ra=(--ipv6-router-lifetime 600)
  node_dir=$work/$n
  mkdir -p "$node_dir"
  jq -n --arg up "net_af_packet0,iface=$uplink" --arg vtep "$vtep/24" --arg peer "$peer" --arg pv "$peer_vtep" \
    --arg pc "$peer_cidr" --arg pc6 "$peer_cidr6" \
    '{vni: 7, uplink: {devargs: $up, vtep: $vtep},
      "remote-nodes": [{name: $peer, vtep: $pv, "pod-cidrs": [$pc, $pc6]}]}' >"$node_dir/overlay.json"
  # Idle PMDs sleep: two sluiced and two testpmds share these two cores.
  start_sluiced "$cidr" --pod-cidr-v6 "$cidr6" --config "$node_dir/overlay.json" --pmd-max-sleep-us 200 "${ra[@]}"
  local net=${cidr%.0/24}
  netconf_subnet=$cidr netconf_gateway=$net.1 write_netconf "se2e-ovl-$n-$id" 1.0.0 "$net.10" "$net.19" "$cidr6"
}
start_node a "$uplink_a" "$vtep_a" "$cidr_a" "$cidr6_a" b "$vtep_b" "$cidr_b" "$cidr6_b"
start_node b "$uplink_b" "$vtep_b" "$cidr_b" "$cidr6_b" a "$vtep_a" "$cidr_a" "$cidr6_a"

# ADDs the pod of node $1 (netns se2e-<id>-pod-$1) and starts its kernel side.
add_pod() {
  local n=$1 pod_netns nsname res port mac ip4 ip6 gw4 gw6 sock
  node_dir=$work/$n
  new_netns "pod-$n" pod_netns
  nsname=${pod_netns##*/}
  res=$("$CNITOOL" add "se2e-ovl-$n-$id" "$pod_netns") || fail "cnitool add (node $n) failed: $res"
  e2e_cleanups+=("'$CNITOOL' del 'se2e-ovl-$n-$id' '$pod_netns'")
  assert_jq "$res" '.ips | length == 2' "node $n: a dual-stack result"
  ip4=$(jq -r '.ips[0].address' <<<"$res")
  ip6=$(jq -r '.ips[1].address' <<<"$res")
  gw4=$(jq -r '.ips[0].gateway' <<<"$res")
  gw6=$(jq -r '.ips[1].gateway' <<<"$res")
  port=$(port_of "$(cnitool_container_id "$pod_netns")" net1)
  [[ -n $port ]] || fail "node $n: no port after ADD: $(ctl ports)"
  mac=$(jq -r .mac <<<"$port")
  sock=$(jq -r .socket_path <<<"$port")
  printf -v "ip4_$n" '%s' "${ip4%/*}"
  printf -v "ip6_$n" '%s' "${ip6%/*}"
  printf -v "ns_$n" '%s' "$nsname"

  # The pod's DPDK side listens (sluiced is the vhost-user client). Both
  # testpmds share CPU 0, niced, so that the sluiced PMDs keep CPU 1.
  mkfifo "$work/testpmd-$n.in"
  ip netns exec "$nsname" stdbuf -oL nice -n 10 dpdk-testpmd --lcores 0@0,1@0 --no-huge --no-pci -m 256 \
    --no-shconf --file-prefix="se2e-ovl-$n-$id" --log-level=4 \
    --vdev "net_virtio_user0,path=$sock,server=1,queues=1,queue_size=1024" --vdev "net_tap0,iface=net1,mac=$mac" \
    -- --no-mlockall --total-num-mbufs=4096 --forward-mode=io --port-topology=paired \
    <"$work/testpmd-$n.in" >"$work/testpmd-$n.log" 2>&1 &
  e2e_pids+=($!)
  local fd
  exec {fd}>"$work/testpmd-$n.in"  # testpmd runs until its stdin closes
  e2e_cleanups+=("exec $fd>&-")
  # Forwarding has started once testpmd waits for its stdin; only then is
  # the TAP (made with the port's MAC) the kernel's to configure.
  wait_until 30 grep -q "Press enter to exit" "$work/testpmd-$n.log" ||
    fail "node $n: testpmd did not start: $(tail "$work/testpmd-$n.log")"
  [[ $(ip -n "$nsname" -j link show net1 | jq -r '.[0].address') == "$mac" ]] ||
    fail "node $n: the pod's TAP does not have the port's MAC $mac: $(ip -n "$nsname" link show net1)"
  ip -n "$nsname" link set net1 down
  ip -n "$nsname" link set net1 addrgenmode eui64
  # The kernel solicits routers once its link-local address is ready; keep
  # soliciting until answered (the first may leave before sluiced connects).
  ip netns exec "$nsname" sysctl -qw net.ipv6.conf.net1.accept_ra=1 net.ipv6.conf.net1.router_solicitations=-1
  ip -n "$nsname" addr add "$ip4" dev net1
  ip -n "$nsname" addr add "$ip6" dev net1 nodad
  ip -n "$nsname" link set net1 up
  ip -n "$nsname" route add default via "$gw4"
  ip -n "$nsname" -6 route add default via "$gw6"
}
add_pod a
add_pod b

link_up() { [[ $(ctl --json ports | jq '[.ports[] | select(.link_up)] | length') == 1 ]]; }
tunnel() { ctl --json nodes | jq -c '.nodes[0]'; }
reachable() { [[ $(tunnel | jq -r .neighbor_state) == reachable ]]; }
for n in a b; do
  node_dir=$work/$n
  wait_until 60 link_up || fail "node $n: sluiced did not connect to the pod: $(ctl ports; tail -5 "$work/testpmd-$n.log")"
  wait_until 30 reachable || fail "node $n: the other node's VTEP not resolved: $(tunnel)"
  printf -v "before_$n" '%s' "$(tunnel)"
done

# Router advertisements: node a's make its gateway, by the link-local address
# its MAC gives (modified EUI-64), pod a's default router; node b serves no
# solicitation and counts each as nd_not_served.
gateway_link_local() {
  local m
  IFS=: read -ra m <<<"$(ctl --json health | jq -r .gateway_mac)"
  # In the form iproute2 prints (RFC 5952), as Python's ipaddress writes it.
  python3 -c 'import ipaddress, sys; print(ipaddress.ip_address(sys.argv[1]))' "$(printf 'fe80::%x:%x:%x:%x' \
    $(((0x${m[0]} ^ 2) << 8 | 0x${m[1]})) $((0x${m[2]} << 8 | 0xff)) $((0xfe00 | 0x${m[3]})) \
    $((0x${m[4]} << 8 | 0x${m[5]})))"
}
ra_router() { ip -n "$ns_a" -6 -j route show default proto ra | jq -r '.[0].gateway // empty'; }
node_dir=$work/a
want_router=$(gateway_link_local)
wait_until 30 eval '[[ $(ra_router) == "$want_router" ]]' ||
  fail "pod a: no default router $want_router from a router advertisement: $(ip -n "$ns_a" -6 route show)"
note "pod a: default router $(ra_router) from node a's router advertisement"
not_served() { ctl --json stats | jq '[.drops[]? | select(.reason == "nd_not_served") | .packets | tonumber] | add // 0'; }
node_dir=$work/b
wait_until 30 eval '(($(not_served) > 0))' || fail "node b: no router solicitation counted as nd_not_served"
[[ -z $(ip -n "$ns_b" -6 route show default proto ra) ]] || fail "pod b: a router advertisement from node b"

# Both nodes' ports, tunnel and drop counters, for a failure's message.
dump_nodes() {
  local n
  for n in a b; do
    echo
    echo "-- node $n:"
    node_dir=$work/$n ctl stats 2>&1
    node_dir=$work/$n ctl nodes 2>&1
  done
}

# Pings from pod $1 to address $3 ($2: -4 or -6); every echo must be answered.
ping_from() {
  local out
  out=$(ip netns exec "$(eval echo "\$ns_$1")" ping "$2" -n -c "$pings" -i 0.2 -W 5 "$3" 2>&1) ||
    fail "ping $2 from pod $1 to $3: $out$(dump_nodes)"
  grep -q "$pings packets transmitted, $pings received" <<<"$out" || fail "ping $2 from pod $1 to $3: $out"
  # ping compares each reply's payload with what it sent and checks its checksum.
  ! grep -Eiq "wrong data|bad checksum|DUP!" <<<"$out" || fail "ping $2 from pod $1 to $3: replies altered: $out"
}
ping_from a -4 "$ip4_b"
ping_from a -6 "$ip6_b"
ping_from b -4 "$ip4_a"
ping_from b -6 "$ip6_a"

# Each node sent its pod's requests and the answers to the other pod's, and
# received as many: nothing else crossed (ARP and neighbor discovery stay on
# each node, answered by its sluiced).
crossing=$((4 * pings))
for n in a b; do
  node_dir=$work/$n
  after=$(tunnel)
  before_var="before_$n"
  for dir in tx rx; do
    delta=$(($(jq -r ".${dir}_packets // 0" <<<"$after") - $(jq -r ".${dir}_packets // 0" <<<"${!before_var}")))
    note "node $n: tunnel ${dir}_packets +$delta"
    ((delta == crossing)) || fail "node $n: tunnel ${dir}_packets moved by $delta, not $crossing: $after"
  done
done

for n in a b; do
  node_dir=$work/$n
  ns_var="ns_$n"
  out=$("$CNITOOL" del "se2e-ovl-$n-$id" "/var/run/netns/${!ns_var}" 2>&1) || fail "cnitool del (node $n) failed: $out"
  [[ $(port_count) == 0 ]] || fail "node $n: ports left after DEL: $(ctl ports)"
done
echo "PASS"
