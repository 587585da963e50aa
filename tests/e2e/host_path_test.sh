#!/usr/bin/env bash
# The exception path to the node's kernel (host-interface, host-addresses):
#   - sluiced runs in a netns of its own (the "node": its host addresses on
#     lo), so its TAP and the routes it installs never touch the machine's;
#   - one dual-stack kernel pod (testpmd between a virtio_user port on the
#     pod's vhost-user socket and a TAP in the pod's netns), pod port MTU
#     1400 (port-mtu) while both kernels' interfaces keep 1500;
#   - the pod pings the node's host addresses (IPv4 and IPv6), the node
#     pings the pod; a source the node may not use is dropped and counted;
#   - a 1 MB TCP transfer node -> pod runs through path MTU discovery:
#     sluiced answers the node's 1500-byte segments with fragmentation
#     needed (MTU 1400), the node's kernel learns it, the bytes arrive whole;
#   - at shutdown sluiced removes its TAP and the kernel routes.
source "$(dirname "$0")/lib.sh"
e2e_init
command -v dpdk-testpmd >/dev/null || fail "dpdk-testpmd missing: run scripts/setup.sh"
command -v ping >/dev/null || fail "ping missing: run scripts/setup-e2e.sh"
command -v python3 >/dev/null || fail "python3 missing"

cidr=10.250.0.0/24 cidr6=fd00:250::/64
host4=192.0.2.10 host6=fd00:192::10 spoof4=198.51.100.7
host_if=shp${id}

new_netns node node_netns
node_ns=${node_netns##*/}
ip -n "$node_ns" link set lo up
ip -n "$node_ns" addr add "$host4/32" dev lo
ip -n "$node_ns" addr add "$spoof4/32" dev lo
ip -n "$node_ns" addr add "$host6/128" dev lo nodad
# sluiced in the node's netns: its net_tap makes the host interface there.
real_sluiced=$SLUICED
SLUICED=$work/sluiced-in-node
printf '#!/bin/sh\nexec ip netns exec %s %s "$@"\n' "$node_ns" "$real_sluiced" >"$SLUICED"
chmod +x "$SLUICED"
# Idle PMDs sleep: sluiced and testpmd share these two cores.
start_sluiced "$cidr" --pod-cidr-v6 "$cidr6" --port-mtu 1400 --pmd-max-sleep-us 200 \
  --host-interface "$host_if" --host-addresses "$host4,$host6"

# The kernel side: up, with the routes to the pod CIDRs from the host addresses.
ip -n "$node_ns" -j link show "$host_if" | jq -e '.[0].flags | index("UP")' >/dev/null ||
  fail "host interface not up: $(ip -n "$node_ns" link show "$host_if")"
routes=$(ip -n "$node_ns" route show dev "$host_if")
grep -q "^$cidr scope link src $host4" <<<"$routes" || fail "no IPv4 route to the pods: $routes"
routes6=$(ip -n "$node_ns" -6 route show dev "$host_if")
grep -q "^$cidr6 .*src $host6" <<<"$routes6" || fail "no IPv6 route to the pods: $routes6"
# The TAP is a port in stats (as the uplink is), not a pod.
stats=$(ctl --json stats)
assert_jq "$stats" '[.ports[] | select(.attachment.container_id == "host")] | length == 1' "the host port in stats"
[[ $(port_count) == 0 ]] || fail "the host port is listed as a pod: $(ctl ports)"

export CNI_IFNAME=net1
write_netconf "se2e-hp-$id" 1.0.0 10.250.0.10 10.250.0.19 "$cidr6"
new_netns pod pod_netns
pod_ns=${pod_netns##*/}
res=$("$CNITOOL" add "se2e-hp-$id" "$pod_netns") || fail "cnitool add failed: $res"
e2e_cleanups+=("'$CNITOOL' del 'se2e-hp-$id' '$pod_netns'")
ip4=$(jq -r '.ips[0].address' <<<"$res")
ip6=$(jq -r '.ips[1].address' <<<"$res")
gw4=$(jq -r '.ips[0].gateway' <<<"$res")
gw6=$(jq -r '.ips[1].gateway' <<<"$res")
port=$(port_of "$(cnitool_container_id "$pod_netns")" net1)
[[ -n $port ]] || fail "no port after ADD: $(ctl ports)"
assert_jq "$port" '.mtu == 1400' "the pod port's MTU"
mac=$(jq -r .mac <<<"$port")
sock=$(jq -r .socket_path <<<"$port")
pod4=${ip4%/*} pod6=${ip6%/*}

mkfifo "$work/testpmd.in"
ip netns exec "$pod_ns" stdbuf -oL nice -n 10 dpdk-testpmd --lcores 0@0,1@0 --no-huge --no-pci -m 256 \
  --no-shconf --file-prefix="se2e-hp-$id" --log-level=4 \
  --vdev "net_virtio_user0,path=$sock,server=1,queues=1,queue_size=1024" --vdev "net_tap0,iface=net1,mac=$mac" \
  -- --no-mlockall --total-num-mbufs=4096 --forward-mode=io --port-topology=paired \
  <"$work/testpmd.in" >"$work/testpmd.log" 2>&1 &
e2e_pids+=($!)
exec {testpmd_fd}>"$work/testpmd.in"  # testpmd runs until its stdin closes
e2e_cleanups+=("exec $testpmd_fd>&-")
wait_until 30 grep -q "Press enter to exit" "$work/testpmd.log" || fail "testpmd did not start: $(tail "$work/testpmd.log")"
ip -n "$pod_ns" link set net1 down
ip -n "$pod_ns" link set net1 addrgenmode eui64
ip -n "$pod_ns" link set net1 mtu 1500
ip -n "$pod_ns" addr add "$ip4" dev net1
ip -n "$pod_ns" addr add "$ip6" dev net1 nodad
ip -n "$pod_ns" link set net1 up
ip -n "$pod_ns" route add default via "$gw4"
ip -n "$pod_ns" -6 route add default via "$gw6"
link_up() { [[ $(ctl --json ports | jq '[.ports[] | select(.link_up)] | length') == 1 ]]; }
wait_until 60 link_up || fail "sluiced did not connect to the pod: $(ctl ports; tail -5 "$work/testpmd.log")"

pings=3
# Pings from netns $1 to $3 ($2: -4 or -6, more ping options after); every
# echo must be answered, unaltered.
ping_all() {
  local out
  out=$(ip netns exec "$1" ping "$2" -n -c "$pings" -i 0.2 -W 5 "${@:4}" "$3" 2>&1) ||
    fail "ping $2 from $1 to $3: $out$(echo; ctl stats)"
  grep -q "$pings packets transmitted, $pings received" <<<"$out" || fail "ping $2 from $1 to $3: $out"
  ! grep -Eiq "wrong data|bad checksum|DUP!" <<<"$out" || fail "ping $2 from $1 to $3: replies altered: $out"
}
drops_of() { jq -r --arg r "$2" '[.drops[]? | select(.reason == $r) | .packets // 0 | tonumber] | add // 0' <<<"$1"; }
host_port() { jq -c '.ports[] | select(.attachment.container_id == "host")' <<<"$1"; }

# Pod -> node, node -> pod, both families; the gateway answers too.
ping_all "$pod_ns" -4 "$host4"
ping_all "$pod_ns" -6 "$host6"
ping_all "$pod_ns" -4 "$gw4"
ping_all "$node_ns" -4 "$pod4"
ping_all "$node_ns" -6 "$pod6"
before=$(ctl --json stats)
assert_jq "$(host_port "$before")" '(.rx_packets | tonumber) >= 12 and (.tx_packets | tonumber) >= 12' \
  "the host port's counters moved"

# A source the node may not send from: every echo dropped as spoofed (the
# neighbor entry for the pod is resolved already: only the echoes go).
out=$(ip netns exec "$node_ns" ping -4 -n -c "$pings" -i 0.2 -W 1 -I "$spoof4" "$pod4" 2>&1) &&
  fail "a spoofed source reached the pod: $out"
after=$(ctl --json stats)
spoofed=$(($(drops_of "$after" spoofed_source_ip) - $(drops_of "$before" spoofed_source_ip)))
((spoofed == pings)) || fail "spoofed_source_ip moved by $spoofed, not $pings: $(ctl stats)"

# TCP node -> pod through path MTU discovery. 1 MB of random bytes; the
# listener in the pod hashes what it receives.
head -c 1048576 /dev/urandom >"$work/payload"
want=$(sha256sum "$work/payload" | cut -d' ' -f1)
ip -n "$node_ns" route flush cache
cat >"$work/listen.py" <<'PY'
import hashlib, socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], 5201))
s.listen(1)
open(sys.argv[2], "w").close()  # listening
c, _ = s.accept()
h, n = hashlib.sha256(), 0
while True:
    b = c.recv(65536)
    if not b:
        break
    h.update(b)
    n += len(b)
c.close()
print(n, h.hexdigest())
PY
cat >"$work/send.py" <<'PY'
import socket, sys
s = socket.create_connection((sys.argv[1], 5201), timeout=30)
with open(sys.argv[2], "rb") as f:
    s.sendall(f.read())
s.shutdown(socket.SHUT_WR)
s.recv(1)
s.close()
PY
ip netns exec "$pod_ns" timeout 60 python3 "$work/listen.py" "$pod4" "$work/listening" >"$work/received" 2>&1 &
listener=$!
wait_until 10 test -e "$work/listening" || fail "the listener did not start: $(cat "$work/received")"
ip netns exec "$node_ns" timeout 60 python3 "$work/send.py" "$pod4" "$work/payload" ||
  fail "the transfer failed$(echo; ctl stats)"
wait "$listener" || fail "the listener failed: $(cat "$work/received")"
[[ $(cat "$work/received") == "1048576 $want" ]] || fail "received $(cat "$work/received"), sent 1048576 $want"
final=$(ctl --json stats)
too_big=$(($(drops_of "$final" mtu_exceeded) - $(drops_of "$after" mtu_exceeded)))
icmp=$(($(jq -r '[.pmds[].icmp_errors_sent | tonumber] | add' <<<"$final") -
  $(jq -r '[.pmds[].icmp_errors_sent | tonumber] | add' <<<"$after")))
note "mtu_exceeded +$too_big, icmp_errors_sent +$icmp"
((too_big >= 1 && icmp >= 1)) || fail "no fragmentation needed was sent (mtu_exceeded +$too_big, icmp +$icmp)"
learned=$(ip -n "$node_ns" route get "$pod4")
grep -q "mtu 1400" <<<"$learned" || fail "the node's kernel did not learn the path MTU: $learned"

# Shutdown: the TAP and its routes go with sluiced.
kill -TERM "$sluiced_pid"
wait "$sluiced_pid" || fail "sluiced exited with $?"
! ip -n "$node_ns" link show "$host_if" >/dev/null 2>&1 || fail "the host interface outlived sluiced"
[[ -z $(ip -n "$node_ns" route show "$cidr") ]] || fail "a route to the pods outlived sluiced"
echo "PASS"
