#!/usr/bin/env bash
# Two pods attached by cnitool (cniVersion 1.0.0, host-local) exchange traffic
# through sluiced: ADD both → the pods' DPDK side (bench/node/pvp_traffic, one
# process with a virtio_user port on each returned socket, so only two
# processes busy-poll on this 2-core machine) sends pod A → pod B → sluiced
# counts it on both ports → DEL both → no port left. The network config
# names no vhostMode: sluiced is the vhost-user client, so the pods listen on
# the sockets (virtio_user server=1) and sluiced connects to them.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_init
[[ -x ${CNITOOL:-} ]] || fail "cnitool not found at '${CNITOOL:-}': run scripts/setup-e2e.sh"
[[ -x ${PVP_TRAFFIC:-} ]] || fail "pvp_traffic not built"

start_sluiced 10.250.0.0/24
net=se2e-traffic-$id
# pvp_traffic sends from 10.250.0.10 to 10.250.0.11: a two-address range
# gives pod A the first and pod B the second.
write_netconf "$net" 1.0.0 10.250.0.10 10.250.0.11
new_netns a ns_a
new_netns b ns_b
export CNI_IFNAME=net1

res_a=$("$CNITOOL" add "$net" "$ns_a") || fail "cnitool add (pod A) failed: $res_a"
e2e_cleanups+=("'$CNITOOL' del '$net' '$ns_a'")
res_b=$("$CNITOOL" add "$net" "$ns_b") || fail "cnitool add (pod B) failed: $res_b"
e2e_cleanups+=("'$CNITOOL' del '$net' '$ns_b'")
assert_jq "$res_a" '.ips[0].address == "10.250.0.10/24"' "pod A's address"
assert_jq "$res_b" '.ips[0].address == "10.250.0.11/24"' "pod B's address"

port_a=$(port_of "$(cnitool_container_id "$ns_a")" net1)
port_b=$(port_of "$(cnitool_container_id "$ns_b")" net1)
[[ -n $port_a && -n $port_b ]] || fail "ports missing after ADD: $(ctl ports)"
sock_a=$(jq -r .socket_path <<<"$port_a")
sock_b=$(jq -r .socket_path <<<"$port_b")
assert_jq "$port_a" '.vhost_mode == "VHOST_MODE_CLIENT"' "pod A's port is a vhost-user client"
assert_jq "$port_b" '.vhost_mode == "VHOST_MODE_CLIENT"' "pod B's port is a vhost-user client"
no_a=$(jq -r .port_no <<<"$port_a")
no_b=$(jq -r .port_no <<<"$port_b")
gw_mac=$(ctl --json health | jq -r .gateway_mac)
[[ $gw_mac =~ ^([0-9a-f]{2}:){5}[0-9a-f]{2}$ ]] || fail "no gateway MAC from sluicectl health: '$gw_mac'"

ctl stats clear >/dev/null
# As servers, pvp_traffic's ports wait in their probe until sluiced (which
# retries every second) has connected.
gen=$("$PVP_TRAFFIC" --sock-a "$sock_a" --sock-b "$sock_b" --gateway-mac "$gw_mac" --server 1 \
  --warmup 0.5 --seconds 1 2>"$work/pvp.log" | tail -1) || {
  cat "$work/pvp.log" >&2
  fail "pvp_traffic failed"
}
note "generator: $gen"
assert_jq "$gen" '.sent > 0 and .received > 0' "pod B received what pod A sent"

stats=$(ctl --json stats)
rx_a=$(jq -r --argjson p "$no_a" '.ports[] | select(.port_no == $p) | .rx_packets | tonumber' <<<"$stats")
tx_b=$(jq -r --argjson p "$no_b" '.ports[] | select(.port_no == $p) | .tx_packets | tonumber' <<<"$stats")
note "sluiced: port $no_a rx $rx_a, port $no_b tx $tx_b"
((${rx_a:-0} > 0)) || fail "sluiced counted nothing received on pod A's port: $stats"
((${tx_b:-0} > 0)) || fail "sluiced counted nothing sent on pod B's port: $stats"
# Everything pod B received went through sluiced's pod-B port.
((tx_b >= $(jq .received <<<"$gen"))) || fail "pod B received more than sluiced sent it"

out=$("$CNITOOL" del "$net" "$ns_a" 2>&1) || fail "cnitool del (pod A) failed: $out"
out=$("$CNITOOL" del "$net" "$ns_b" 2>&1) || fail "cnitool del (pod B) failed: $out"
[[ $(port_count) == 0 ]] || fail "ports left after DEL: $(ctl ports)"
[[ ! -e $sock_a && ! -e $sock_b ]] || fail "sockets left after DEL"
echo "PASS"
