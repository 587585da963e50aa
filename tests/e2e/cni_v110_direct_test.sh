#!/usr/bin/env bash
# cniVersion 1.1.0, the plugin executed the way a runtime does (Debian's
# libcni, and so cnitool, speaks only up to 1.0.0): ADD returns the 1.1
# `socketPath` of the port sluiced made (in server mode, named explicitly:
# the e2e test of sluiced as the vhost-user server, the socket its own;
# the other tests use the default client mode); CHECK and STATUS pass, CHECK fails
# with 101 once the port is gone; DEL and a
# repeated DEL leave nothing; STATUS fails with 50 once sluiced is gone.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_init

start_sluiced 10.250.0.0/24
net=se2e-v110-$id
mkdir -p "$work/ipam" "$work/records"
new_netns a netns
conf=$(jq -n --arg name "$net" --arg api "$work/api.sock" --arg sd "$work/vhost" --arg dd "$work/records" \
  --arg ipam "$work/ipam" '{
    cniVersion: "1.1.0", name: $name, type: "sluice-cni", vhostMode: "server",
    apiSocket: $api, socketDir: $sd, dataDir: $dd, mtu: 1500,
    ipam: {type: "host-local", dataDir: $ipam, ranges: [[{subnet: "10.250.0.0/24", rangeStart: "10.250.0.30",
           rangeEnd: "10.250.0.39"}]]}
  }')
cid=e2e-v110-$id

# Runs the plugin: $1 = CNI_COMMAND, stdin = the config; prints its stdout.
plugin() {
  CNI_COMMAND=$1 CNI_CONTAINERID=$cid CNI_NETNS=$netns CNI_IFNAME=net1 \
    CNI_ARGS="IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=e2e" "$SLUICE_CNI_DIR/sluice-cni" 2>>"$work/plugin.log"
}
with_prev() { jq -c --argjson r "$1" '. + {prevResult: $r}' <<<"$conf"; }

result=$(plugin ADD <<<"$conf") || fail "ADD failed: $result"
assert_jq "$result" '.cniVersion == "1.1.0"' "result version"
assert_jq "$result" '.interfaces[0].name == "net1"' "interface named CNI_IFNAME"
assert_jq "$result" '.interfaces[0].mtu == 1500' "1.1 interface mtu"
assert_jq "$result" '.interfaces[0].socketPath | type == "string"' "1.1 socketPath"
socket=$(jq -r '.interfaces[0].socketPath' <<<"$result")
[[ -S $socket ]] || fail "socketPath $socket is not a socket"
port=$(port_of "$cid" net1)
[[ -n $port ]] || fail "no port after ADD: $(ctl ports)"
assert_jq "$port" ".socket_path == \"$socket\"" "the port's socket is the result's socketPath"
assert_jq "$port" '.vhost_mode == "VHOST_MODE_SERVER"' "vhostMode \"server\" makes sluiced the vhost-user server"
assert_jq "$port" ".mac == $(jq '.interfaces[0].mac' <<<"$result")" "port MAC equals the result's"
ip=$(jq -r '.ips[0].address' <<<"$result")
[[ $ip =~ ^10\.250\.0\.3[0-9]/24$ ]] || fail "address $ip outside the range"

out=$(plugin CHECK <<<"$(with_prev "$result")") || fail "CHECK failed: $out"
out=$(plugin STATUS <<<"$conf") || fail "STATUS failed with sluiced up: $out"

# CHECK notices a port removed behind the plugin's back: error 101.
ctl port del --container-id "$cid" --ifname net1 >/dev/null
if out=$(plugin CHECK <<<"$(with_prev "$result")"); then fail "CHECK passed without the port"; fi
assert_jq "$out" '.code == 101' "CHECK's code for a missing port"

out=$(plugin DEL <<<"$(with_prev "$result")") || fail "DEL failed: $out"
[[ $(port_count) == 0 ]] || fail "port left after DEL: $(ctl ports)"
[[ ! -e $socket ]] || fail "socket left after DEL"
[[ ! -e $work/ipam/$net/${ip%/24} ]] || fail "lease not released"
out=$(plugin DEL <<<"$conf") || fail "repeated DEL (no prevResult) failed: $out"

# sluiced gone: STATUS says the plugin cannot add (code 50).
kill -TERM "$sluiced_pid"
wait "$sluiced_pid" || true
if out=$(plugin STATUS <<<"$conf"); then fail "STATUS succeeded with sluiced down"; fi
assert_jq "$out" '.code == 50' "STATUS code with sluiced down"
echo "PASS"
