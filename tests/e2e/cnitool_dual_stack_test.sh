#!/usr/bin/env bash
# Dual-stack pods: upstream cnitool drives sluice-cni against the real sluiced
# with Debian's host-local holding an IPv4 and an IPv6 range set.
#   1. On a sluiced started with an IPv6 pod CIDR: ADD returns both addresses
#      with their gateways, host-local holds a lease of each family, the
#      attachment record and the device-info file carry both, sluiced's port
#      has both (sluicectl ports), CHECK passes, DEL releases both leases.
#   2. On a sluiced without one: ADD fails with the error that names the
#      family and sluiced's pod-cidr-v6, and leaves no lease, port or record.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_init
[[ -x ${CNITOOL:-} ]] || fail "cnitool not found at '${CNITOOL:-}': run scripts/setup-e2e.sh"

v6_subnet=fd00:250::/64

net=se2e-v6cni-$id
write_netconf "$net" 1.0.0 10.250.0.20 10.250.0.29 "$v6_subnet"
jq '.plugins[0].capabilities = {CNIDeviceInfoFile: true}' "$NETCONFPATH/$net.conflist" >"$work/conf.tmp"
mv "$work/conf.tmp" "$NETCONFPATH/$net.conflist"
mkdir -p "$work/devinfo"
new_netns v6cni-a netns
cid=$(cnitool_container_id "$netns")
export CNI_IFNAME=net1
info=$work/devinfo/$cid-net1.json
leases() { find "$work/ipam/$net" -type f \( -name '10.*' -o -name 'fd00*' \) -printf '%f\n' 2>/dev/null | sort; }
records() { find "$work/records" -type f ! -name cni.log; }

# --- 1. A sluiced with an IPv6 pod CIDR.
start_sluiced 10.250.0.0/24 --pod-cidr-v6 "$v6_subnet"
health=$(ctl --json health)
assert_jq "$health" '.pod_cidr_v6 == "fd00:250::/64" and .gateway_v6 == "fd00:250::1"' "health names the IPv6 pod CIDR"
ctl health | grep -q "IPv6: pod CIDR fd00:250::/64, gateway fd00:250::1" || fail "sluicectl health: $(ctl health)"
result=$(CAP_ARGS="{\"CNIDeviceInfoFile\":\"$info\"}" "$CNITOOL" add "$net" "$netns") ||
  fail "cnitool add failed: $result"
assert_jq "$result" '.ips | length == 2' "two addresses"
assert_jq "$result" '.ips[0].address | test("^10\\.250\\.0\\.2[0-9]/24$")' "IPv4 address from the first range set"
assert_jq "$result" '.ips[0].gateway == "10.250.0.1"' "IPv4 gateway"
assert_jq "$result" '.ips[1].address == "fd00:250::2/64"' "IPv6 address from the second range set"
assert_jq "$result" '.ips[1].gateway == "fd00:250::1"' "IPv6 gateway (the subnet's first host)"
assert_jq "$result" '[.ips[].interface] == [0, 0]' "both point at the interface"
ip=$(jq -r '.ips[0].address' <<<"$result")
ip=${ip%/24}
[[ $(leases) == "$(printf '%s\n' "$ip" fd00:250::2)" ]] || fail "host-local leases: $(leases | tr '\n' ' ')"
record=$(cat "$(records)")
assert_jq "$record" ".ip == \"$ip\" and .ipv6 == \"fd00:250::2\"" "the attachment record has both"
assert_jq "$(cat "$info")" ".ips == [\"$ip\", \"fd00:250::2\"]" "the device-info file has both"

port=$(port_of "$cid" net1)
[[ -n $port ]] || fail "no sluiced port for $cid/net1 after ADD: $(ctl ports)"
assert_jq "$port" ".ip == \"$ip\" and .ipv6 == \"fd00:250::2\"" "sluiced's port has both addresses"
ctl ports | grep -q 'fd00:250::2' || fail "sluicectl ports does not show the IPv6 address: $(ctl ports)"
out=$("$CNITOOL" check "$net" "$netns" 2>&1) || fail "cnitool check failed: $out"

out=$("$CNITOOL" del "$net" "$netns" 2>&1) || fail "cnitool del failed: $out"
[[ -z $(leases) ]] || fail "host-local leases left after DEL: $(leases | tr '\n' ' ')"
[[ -z $(records) ]] || fail "attachment record left after DEL: $(records)"
[[ ! -e $info ]] || fail "device-info file left after DEL"
[[ $(port_count) == 0 ]] || fail "sluiced still has ports after DEL: $(ctl ports)"

# --- 2. The same network on a sluiced without an IPv6 pod CIDR.
kill -TERM "$sluiced_pid"
wait "$sluiced_pid" 2>/dev/null || true
start_sluiced 10.250.0.0/24
if out=$(CAP_ARGS="{\"CNIDeviceInfoFile\":\"$info\"}" "$CNITOOL" add "$net" "$netns" 2>&1); then
  fail "cnitool add succeeded on a sluiced without pod-cidr-v6: $out"
fi
grep -Eq "does not take IPv6 \(pod address fd00:250::[0-9a-f]+\)" <<<"$out" || fail "not the family's error: $out"
grep -q 'set sluiced.s "pod-cidr-v6"' <<<"$out" || fail "the error does not name pod-cidr-v6: $out"
[[ -z $(leases) ]] || fail "host-local leases left after the refused ADD: $(leases | tr '\n' ' ')"
[[ -z $(records) ]] || fail "attachment record left after the refused ADD: $(records)"
[[ ! -e $info ]] || fail "device-info file left after the refused ADD"
[[ $(port_count) == 0 ]] || fail "sluiced has a port after the refused ADD: $(ctl ports)"
echo "PASS"
