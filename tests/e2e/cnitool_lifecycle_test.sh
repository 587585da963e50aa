#!/usr/bin/env bash
# Upstream cnitool (libcni, as runtimes use it) drives sluice-cni against the
# real sluiced, with Debian's host-local IPAM, cniVersion 1.0.0, in the
# default vhost-user mode (sluiced is the client: the pod creates the socket):
# ADD → result and port → CHECK → DEL → nothing left → DEL again succeeds;
# and CHECK fails once the port has gone behind the plugin's back.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_init
[[ -x ${CNITOOL:-} ]] || fail "cnitool not found at '${CNITOOL:-}': run scripts/setup-e2e.sh"

start_sluiced 10.250.0.0/24
net=se2e-life-$id
write_netconf "$net" 1.0.0 10.250.0.20 10.250.0.29
new_netns a netns
cid=$(cnitool_container_id "$netns")
export CNI_IFNAME=net1

# --- ADD
result=$("$CNITOOL" add "$net" "$netns") || fail "cnitool add failed: $result"
assert_jq "$result" '.cniVersion == "1.0.0"' "result version"
assert_jq "$result" '.interfaces | length == 1' "one interface"
assert_jq "$result" '.interfaces[0].name == "net1"' "interface named CNI_IFNAME"
assert_jq "$result" '.interfaces[0].mac | test("^([0-9a-f]{2}:){5}[0-9a-f]{2}$")' "interface MAC"
assert_jq "$result" ".interfaces[0].sandbox == \"$netns\"" "interface sandbox is the netns"
assert_jq "$result" '.ips | length == 1' "one address"
assert_jq "$result" '.ips[0].interface == 0' "address points at the interface"
assert_jq "$result" '.ips[0].gateway == "10.250.0.1"' "gateway from IPAM"
ip=$(jq -r '.ips[0].address' <<<"$result")
mac=$(jq -r '.interfaces[0].mac' <<<"$result")
[[ $ip =~ ^10\.250\.0\.2[0-9]/24$ ]] || fail "address $ip outside host-local's range 10.250.0.20-29/24"
ip=${ip%/24}

# The port sluiced holds for this attachment matches the result.
port=$(port_of "$cid" net1)
[[ -n $port ]] || fail "no sluiced port for $cid/net1 after ADD: $(ctl ports)"
assert_jq "$port" ".ip == \"$ip\"" "port IP equals the result's"
assert_jq "$port" ".mac == \"$mac\"" "port MAC equals the result's"
socket=$(jq -r '.socket_path' <<<"$port")
[[ $socket == "$work/vhost/"* ]] || fail "socket $socket not under socketDir $work/vhost"
# The network config names no vhostMode: sluiced connects to the pod's socket,
# which the pod creates in the directory ADD made for it.
assert_jq "$port" '.vhost_mode == "VHOST_MODE_CLIENT"' "sluiced's port is a vhost-user client by default"
[[ -d $(dirname "$socket") ]] || fail "pod socket directory $(dirname "$socket") missing"
[[ ! -e $socket ]] || fail "$socket exists before the pod made it: sluiced is not the client"
[[ -f $work/ipam/$net/$ip ]] || fail "host-local holds no lease file for $ip"

# --- CHECK (libcni passes the cached ADD result as prevResult)
out=$("$CNITOOL" check "$net" "$netns" 2>&1) || fail "cnitool check failed: $out"

# --- DEL: no port, no socket, no lease, no record
out=$("$CNITOOL" del "$net" "$netns" 2>&1) || fail "cnitool del failed: $out"
[[ -z $(port_of "$cid" net1) ]] || fail "port still present after DEL: $(ctl ports)"
[[ $(port_count) == 0 ]] || fail "sluiced still has ports after DEL: $(ctl ports)"
[[ ! -e $socket ]] || fail "socket $socket left after DEL"
[[ ! -e $(dirname "$socket") || $(dirname "$socket") == "$work/vhost" ]] ||
  fail "per-pod socket directory $(dirname "$socket") left after DEL"
[[ ! -e $work/ipam/$net/$ip ]] || fail "host-local lease for $ip not released"
[[ -z $(find "$work/records" -type f ! -name cni.log) ]] || fail "attachment record left: $(find "$work/records" -type f)"

# --- DEL again: idempotent
out=$("$CNITOOL" del "$net" "$netns" 2>&1) || fail "second cnitool del failed: $out"
[[ $(port_count) == 0 ]] || fail "second DEL changed sluiced's ports"

# --- CHECK detects a port removed behind the plugin's back (cnitool prints
# only the message; the code, 101, is asserted in cni_v110_direct_test.sh)
result=$("$CNITOOL" add "$net" "$netns") || fail "second cnitool add failed: $result"
ctl port del --container-id "$cid" --ifname net1 >/dev/null
if out=$("$CNITOOL" check "$net" "$netns" 2>&1); then
  fail "cnitool check succeeded although the port is gone"
fi
grep -q 'no port' <<<"$out" || fail "CHECK failed for another reason than the missing port: $out"
out=$("$CNITOOL" del "$net" "$netns" 2>&1) || fail "cnitool del after a lost port failed: $out"
# host-local names each lease file after its address.
[[ -z $(find "$work/ipam/$net" -type f -name '10.*') ]] || fail "host-local leases left: $(ls -A "$work/ipam/$net")"
echo "PASS"
