#!/usr/bin/env bash
# SR-IOV with kernel netdevs standing in for VFs: two veth ends are the VFs of a fake PF in a fake sysfs tree; the real sluiced owns that pool
# (with the test-only fake PF control: no SR-IOV hardware here), the real
# sluice-cni with host-local IPAM attaches pods in real network namespaces.
#   kernel mode via cnitool (1.0.0): ADD moves the VF netdev into the netns,
#     renamed to CNI_IFNAME, with the result's MAC, the config's MTU, the
#     IPAM address and routes, up; sluiced shows the VF held with the VLAN,
#     trust and spoof-check of the config; CHECK passes, and fails once the
#     netdev is down; DEL moves it back under its own
#     name and MAC and the VF is free again; DEL again succeeds.
#   Multus-style runtime config (cnitool's CAP_ARGS → runtimeConfig):
#     deviceID picks the VF, mac is the netdev's and the VF's MAC, ips asks
#     host-local for that address, which lands on the netdev; the VF
#     settings (vlanQoS, vlanProto, link_state, min/max_tx_rate) reach
#     sluiced; a DEL with an empty CNI_NETNS (containerd's second DEL) still
#     sends it home.
#   refusals leave nothing behind: pool exhausted (11), unknown deviceID (7),
#     malformed deviceID (7), and a failure inside the pod's netns (an
#     interface already named CNI_IFNAME) undone back to the host.
#   dual-stack kernel mode (host-local with an IPv6 range set too): the VF
#     netdev gets both addresses (the IPv6 one not tentative: no DAD) and a
#     default route of each family via its gateway; DEL releases both.
#   DPDK mode, 1.1.0 (plugin executed directly): the VF stays in the host,
#     the result carries pciID, the device-info file its PCI address.
#   kill -9 of sluiced with a VF handed out: the restarted sluiced holds it
#     again (checkpoint), and DEL then frees it.
#   the pool's "vfs"/"mode" in sluiced itself: at start it points each VF's
#     driver_override at vfio-pci, unbinds and probes it (plain files here:
#     no kernel answers), and on SIGTERM puts back the override it found.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_init
# The network below asks for trust on and spoof checking off, which the node
# must allow.
jq '. + {allowVfTrust: true, allowVfSpoofchkOff: true}' "$SLUICE_CNI_NODE_CONFIG" >"$work/node-cni.json.new"
mv "$work/node-cni.json.new" "$SLUICE_CNI_NODE_CONFIG"
[[ -x ${CNITOOL:-} ]] || fail "cnitool not found at '${CNITOOL:-}': run scripts/setup-e2e.sh"

# --- the stand-in VFs and the fake sysfs tree
vf0=ssv${id}0 vf1=ssv${id}1
pci0=0000:7f:00.1 pci1=0000:7f:00.2
sys=$work/sys
for i in 0 1; do
  name=vf$i pci=pci$i
  # veth (this kernel has no dummy driver); the peer stays in the host, up,
  # so the VF end has carrier wherever it goes.
  ip link add "${!name}" type veth peer name "${!name}p"
  ip link set "${!name}p" up
  e2e_cleanups+=("ip link del ${!name}p")
  mkdir -p "$sys/bus/pci/devices/${!pci}/net/${!name}" "$sys/class/net/sepf0/device"
  ln -s "../../../../bus/pci/devices/${!pci}" "$sys/class/net/sepf0/device/virtfn$i"
  # A kernel VF driver bound, no override: what a fresh VF looks like.
  mkdir -p "$sys/bus/pci/drivers/sefakevf"
  ln -s ../../drivers/sefakevf "$sys/bus/pci/devices/${!pci}/driver"
  echo '(null)' >"$sys/bus/pci/devices/${!pci}/driver_override"
done
: >"$sys/bus/pci/drivers/sefakevf/unbind"
: >"$sys/bus/pci/drivers_probe"
echo 8 >"$sys/class/net/sepf0/device/sriov_totalvfs"
echo 2 >"$sys/class/net/sepf0/device/sriov_numvfs"
ip link set "$vf0" address 02:aa:bb:00:00:10 mtu 1500
ip link set "$vf1" address 02:aa:bb:00:00:11 mtu 1500

# --- sluiced with that pool and the fake PF control
jq -n --arg sys "$sys" --arg state "$work/state" \
  '{"sriov-pools": [{pf: "sepf0", "sysfs-root": $sys, vfs: 2, mode: "vfio"}], "sriov-pf-control": "fake",
    "state-dir": $state}' \
  >"$work/sluiced.json"
# sluiced takes a pod's IPv6 address only with an IPv6 pod CIDR.
v6_args=(--pod-cidr-v6 fd00:252::/64)
start_sriov_sluiced() {
  "$SLUICED" --config "$work/sluiced.json" --api-socket "$work/api.sock" --socket-dir "$work/vhost" \
    --pod-cidr 10.250.0.0/24 "${v6_args[@]}" --main-core 0 --pmd-cores 1 --max-ports 8 --mbufs 16384 \
    --eal "--no-huge --no-pci -m 512 --no-shconf --file-prefix=se2e-$id" >>"$work/sluiced.log" 2>&1 &
  sluiced_pid=$!
  e2e_pids+=("$sluiced_pid")
  wait_until 60 sluiced_healthy || fail "sluiced not healthy within 60 s"
}
start_sriov_sluiced
grep -q 'sriov-pf-control is "fake"' "$work/sluiced.log" || fail "sluiced did not warn about the fake PF control"
# The count was right (no sriov_numvfs write); each VF was pointed at vfio-pci.
[[ $(cat "$sys/class/net/sepf0/device/sriov_numvfs") == 2 ]] || fail "sriov_numvfs rewritten"
for p in $pci0 $pci1; do
  [[ $(cat "$sys/bus/pci/devices/$p/driver_override") == vfio-pci ]] || fail "VF $p not pointed at vfio-pci"
done
[[ $(cat "$sys/bus/pci/drivers/sefakevf/unbind") == "$pci1" ]] || fail "VF $pci1 not unbound"
[[ $(cat "$sys/bus/pci/drivers_probe") == "$pci1" ]] || fail "VF $pci1 not probed"

vfs() { ctl --json vfs; }
vf_holder() { vfs | jq -r --arg p "$1" '.vfs[] | select(.pci_address == $p) | if .in_use then .attachment.container_id + "/" + .attachment.ifname else "free" end'; }
lease_count() { find "$work/ipam" -type f -name '10.*' 2>/dev/null | wc -l; }
record_count() { find "$work/records" -type f ! -name '*.log' | wc -l; }
[[ $(vfs | jq '.vfs | length') == 2 ]] || fail "sluiced's pool is not the two VFs: $(ctl vfs)"
[[ $(vf_holder $pci0) == free && $(vf_holder $pci1) == free ]] || fail "VFs not free at start: $(ctl vfs)"

# --- the network (kernel mode)
net=se2e-sriov-$id
mkdir -p "$work/net.d" "$work/ipam" "$work/records"
export NETCONFPATH="$work/net.d"
e2e_cleanups+=("rm -f /var/lib/cni/results/$net-*")
netconf() { # $1 = cniVersion, $2 = sriovMode
  jq -n --arg name "$net" --arg v "$1" --arg mode "$2" --arg api "$work/api.sock" --arg dd "$work/records" \
    --arg ipam "$work/ipam" --arg sd "$work/vhost" '{
      cniVersion: $v, name: $name, type: "sluice-cni", interfaceType: "sriov", sriovMode: $mode,
      vlan: 100, vlanQoS: 5, vlanProto: "802.1Q", link_state: "enable", min_tx_rate: 10, max_tx_rate: 1000,
      trust: "on", spoofchk: "off", mtu: 1400, capabilities: {deviceID: true, mac: true, ips: true},
      apiSocket: $api, socketDir: $sd, dataDir: $dd, logFile: ($dd + "/cni.log"),
      ipam: {type: "host-local", dataDir: $ipam,
             ranges: [[{subnet: "10.252.0.0/24", rangeStart: "10.252.0.20", rangeEnd: "10.252.0.29",
                        gateway: "10.252.0.1"}]],
             routes: [{dst: "10.253.0.0/16"}, {dst: "10.254.0.0/16", gw: "10.252.0.9"}]}
    }'
}
netconf 1.0.0 kernel | jq '{cniVersion, name, plugins: [del(.cniVersion, .name)]}' >"$work/net.d/$net.conflist"
export CNI_IFNAME=net1

# --- ADD (cnitool): pod A gets the first free VF
new_netns a nsa
cida=$(cnitool_container_id "$nsa")
result=$("$CNITOOL" add "$net" "$nsa") || fail "cnitool add failed: $result"
assert_jq "$result" '.interfaces[0].name == "net1"' "interface named CNI_IFNAME"
assert_jq "$result" ".interfaces[0].sandbox == \"$nsa\"" "interface sandbox is the netns"
assert_jq "$result" '.ips[0].address | test("^10\\.252\\.0\\.2[0-9]/24$")' "address from host-local"
mac=$(jq -r '.interfaces[0].mac' <<<"$result")
addr=$(jq -r '.ips[0].address' <<<"$result")
link=$(ip -n "se2e-$id-a" -j link show net1) || fail "no net1 in pod A's netns: $(ip -n "se2e-$id-a" link)"
assert_jq "$link" ".[0].address == \"$mac\"" "netdev MAC is the result's"
assert_jq "$link" '.[0].mtu == 1400' "netdev MTU from the config"
assert_jq "$link" '.[0].flags | index("UP") != null' "netdev up"
ip -n "se2e-$id-a" -4 -o addr show dev net1 | grep -q "inet $addr " || fail "address $addr not on net1"
ip -n "se2e-$id-a" route show 10.253.0.0/16 | grep -q 'via 10.252.0.1 dev net1' ||
  fail "route without gw not via the IPAM gateway: $(ip -n "se2e-$id-a" route)"
ip -n "se2e-$id-a" route show 10.254.0.0/16 | grep -q 'via 10.252.0.9 dev net1' ||
  fail "route with gw missing: $(ip -n "se2e-$id-a" route)"
! ip link show "$vf0" >/dev/null 2>&1 || fail "VF netdev $vf0 still in the host namespace"
[[ $(vf_holder $pci0) == "$cida/net1" ]] || fail "VF $pci0 not held by pod A: $(ctl vfs)"
port=$(port_of "$cida" net1)
assert_jq "$port" ".type == \"PORT_TYPE_SRIOV_VF\" and .pci_id == \"$pci0\" and .vf_netdev == \"$vf0\"" "the VF port"
assert_jq "$port" '.vlan == 100 and .vf_trust == true and (.vf_spoof_check // false) == false' "VF settings"
assert_jq "$port" '.vlan_qos == 5 and .vlan_proto == "VLAN_PROTO_8021Q" and .vf_link_state == "VF_LINK_STATE_ENABLE"
  and .min_tx_rate == 10 and .max_tx_rate == 1000' "sriov-cni's VF settings"
assert_jq "$port" ".mac == \"$mac\" and .ip == \"${addr%/24}\"" "port MAC and IP"
grep -q "handed to $cida/net1 kernel mac $mac vlan 100 trust on spoofchk off" "$work/sluiced.log" ||
  fail "sluiced did not program the VF as configured"

# --- CHECK: passes, and fails (101) once the netdev is down behind our back
out=$("$CNITOOL" check "$net" "$nsa" 2>&1) || fail "cnitool check failed: $out"
ip -n "se2e-$id-a" link set net1 down
if out=$("$CNITOOL" check "$net" "$nsa" 2>&1); then fail "CHECK passed with the VF netdev down"; fi
grep -q "is down" <<<"$out" || fail "CHECK failed for another reason: $out"
ip -n "se2e-$id-a" link set net1 up

# --- ADD pod B as Multus delegates: the second VF by deviceID, a MAC and an
# address from the runtime (CAP_ARGS → runtimeConfig)
new_netns b nsb
cidb=$(cnitool_container_id "$nsb")
caps=$(jq -nc --arg pci "$pci1" '{deviceID: $pci, mac: "02:5a:00:00:00:b0", ips: ["10.252.0.27/24"]}')
result_b=$(CAP_ARGS=$caps "$CNITOOL" add "$net" "$nsb") || fail "add with runtime config failed: $result_b"
assert_jq "$result_b" '.interfaces[0].mac == "02:5a:00:00:00:b0"' "result MAC from runtimeConfig.mac"
assert_jq "$result_b" '.ips[0].address == "10.252.0.27/24"' "result address from runtimeConfig.ips"
link_b=$(ip -n "se2e-$id-b" -j link show net1) || fail "no net1 in pod B"
assert_jq "$link_b" '.[0].address == "02:5a:00:00:00:b0"' "pod B's netdev has the runtime MAC"
ip -n "se2e-$id-b" -4 -o addr show dev net1 | grep -q "inet 10.252.0.27/24 " || fail "runtime address not on pod B's net1"
[[ $(vf_holder $pci1) == "$cidb/net1" ]] || fail "deviceID $pci1 not given to pod B: $(ctl vfs)"
assert_jq "$(port_of "$cidb" net1)" '.mac == "02:5a:00:00:00:b0" and .ip == "10.252.0.27"' "sluiced programmed the runtime MAC"

# --- refusals: nothing may be left behind
new_netns c nsc
cidc=$(cnitool_container_id "$nsc")
before_leases=$(lease_count) before_records=$(record_count)
nothing_left_for_c() {
  [[ $(lease_count) == "$before_leases" ]] || fail "$1: lease left ($(lease_count) vs $before_leases)"
  [[ $(record_count) == "$before_records" ]] || fail "$1: record left"
  [[ -z $(port_of "$cidc" net1) ]] || fail "$1: port left: $(ctl ports)"
  ! ip -n "se2e-$id-c" link show net1 >/dev/null 2>&1 || fail "$1: net1 appeared in pod C"
}
plugin_c() { # $1 = command, stdin = config; CNI_NETNS may be overridden by the caller's env
  CNI_COMMAND=$1 CNI_CONTAINERID=$cidc CNI_NETNS=${NETNS_C-$nsc} CNI_IFNAME=net1 "$SLUICE_CNI_DIR/sluice-cni" \
    2>>"$work/plugin.log"
}
out=$(netconf 1.0.0 kernel | plugin_c ADD) && fail "ADD succeeded with the pool exhausted: $out"
assert_jq "$out" '.code == 11 and (.msg | test("exhausted"))' "pool exhausted: code 11"
nothing_left_for_c "pool exhausted"
out=$(netconf 1.0.0 kernel | jq '.runtimeConfig = {deviceID: "0000:7f:1f.7"}' | plugin_c ADD) &&
  fail "ADD succeeded with an unknown deviceID: $out"
assert_jq "$out" '.code == 7 and (.msg | test("0000:7f:1f.7"))' "unknown deviceID: code 7 naming it"
nothing_left_for_c "unknown deviceID"
out=$(netconf 1.0.0 kernel | jq '.deviceID = "eth0"' | plugin_c ADD) && fail "ADD took a malformed deviceID"
assert_jq "$out" '.code == 7 and (.msg | test("deviceID"))' "malformed deviceID: code 7 naming the field"
nothing_left_for_c "malformed deviceID"

# --- DEL pod A: the netdev is home under its own name and MAC, the VF free
out=$("$CNITOOL" del "$net" "$nsa" 2>&1) || fail "cnitool del failed: $out"
home=$(ip -j link show "$vf0") || fail "VF netdev $vf0 not back in the host namespace"
assert_jq "$home" '.[0].address == "02:aa:bb:00:00:10" and .[0].mtu == 1500' "original MAC and MTU restored"
! ip -n "se2e-$id-a" link show net1 >/dev/null 2>&1 || fail "net1 still in pod A"
[[ $(vf_holder $pci0) == free ]] || fail "VF $pci0 not free after DEL: $(ctl vfs)"
[[ -z $(port_of "$cida" net1) ]] || fail "VF port left after DEL"
out=$("$CNITOOL" del "$net" "$nsa" 2>&1) || fail "second DEL failed: $out"

# --- a failure inside the pod's netns is undone: pod C already has a net1
ip -n "se2e-$id-c" link add net1 type veth peer name net1p
before_leases=$(lease_count)
out=$(netconf 1.0.0 kernel | plugin_c ADD) && fail "ADD succeeded although net1 exists in the pod: $out"
ip link show "$vf0" >/dev/null || fail "VF netdev $vf0 not returned to the host after a failed ADD"
assert_jq "$(ip -j link show "$vf0")" '.[0].address == "02:aa:bb:00:00:10"' "MAC restored after a failed ADD"
[[ $(vf_holder $pci0) == free ]] || fail "VF held after a failed ADD: $(ctl vfs)"
[[ $(lease_count) == "$before_leases" ]] || fail "lease left after a failed ADD"
[[ -z $(port_of "$cidc" net1) ]] || fail "port left after a failed ADD"
ip -n "se2e-$id-c" link del net1

# --- DEL pod B with an empty CNI_NETNS (the record knows the netns)
out=$(CNI_COMMAND=DEL CNI_CONTAINERID=$cidb CNI_NETNS= CNI_IFNAME=net1 "$SLUICE_CNI_DIR/sluice-cni" \
      <<<"$(netconf 1.0.0 kernel)" 2>>"$work/plugin.log") || fail "DEL with empty CNI_NETNS failed: $out"
ip link show "$vf1" >/dev/null || fail "VF netdev $vf1 not back after DEL without CNI_NETNS"
[[ $(vf_holder $pci1) == free ]] || fail "VF $pci1 not free: $(ctl vfs)"

# --- DPDK mode, 1.1.0, plugin executed directly: the VF stays in the host
info=$work/devinfo/net1.json
conf=$(netconf 1.1.0 dpdk | jq --arg pci "$pci1" --arg info "$info" \
  '.runtimeConfig = {deviceID: $pci, CNIDeviceInfoFile: $info}')
result=$(plugin_c ADD <<<"$conf") || fail "DPDK-mode ADD failed: $result"
assert_jq "$result" ".interfaces[0].pciID == \"$pci1\"" "1.1 pciID"
assert_jq "$(cat "$info")" ".type == \"pci\" and .pci[\"pci-address\"] == \"$pci1\"" "device-info has the PCI address"
ip link show "$vf1" >/dev/null || fail "DPDK mode moved the VF netdev"
! ip -n "se2e-$id-c" link show net1 >/dev/null 2>&1 || fail "DPDK mode put a netdev into the pod"
assert_jq "$(port_of "$cidc" net1)" '.sriov_mode == "SRIOV_MODE_DPDK"' "port in DPDK mode"
out=$(plugin_c DEL <<<"$conf") || fail "DPDK-mode DEL failed: $out"
[[ ! -e $info ]] || fail "device-info file left after DEL"
[[ $(vf_holder $pci1) == free ]] || fail "VF $pci1 not free after the DPDK DEL"

# --- dual-stack, kernel mode: host-local's second (IPv6) range set; the VF
# netdev gets both addresses, the IPv6 one usable at once (no DAD: not
# tentative), and a default route of each family via its own gateway
dual=$(netconf 1.0.0 kernel | jq '.ipam.ranges += [[{subnet: "fd00:252::/64"}]]
  | .ipam.routes += [{dst: "0.0.0.0/0"}, {dst: "::/0"}]')
result=$(plugin_c ADD <<<"$dual") || fail "dual-stack ADD failed: $result"
assert_jq "$result" '.ips | length == 2 and .[1].address == "fd00:252::2/64" and .[1].gateway == "fd00:252::1"' \
  "the IPv6 address and gateway in the result"
addr6=$(ip -n "se2e-$id-c" -6 -o addr show dev net1 scope global)
grep -q 'inet6 fd00:252::2/64 ' <<<"$addr6" || fail "IPv6 address not on the VF netdev: $addr6"
! grep -q tentative <<<"$addr6" || fail "IPv6 address still tentative (DAD): $addr6"
ip -n "se2e-$id-c" -4 -o addr show dev net1 | grep -q 'inet 10\.252\.0\.2[0-9]/24 ' ||
  fail "IPv4 address not on the VF netdev: $(ip -n "se2e-$id-c" addr)"
ip -n "se2e-$id-c" -6 route show default | grep -q 'via fd00:252::1 dev net1' ||
  fail "no IPv6 default route via the IPv6 gateway: $(ip -n "se2e-$id-c" -6 route)"
ip -n "se2e-$id-c" -4 route show default | grep -q 'via 10.252.0.1 dev net1' ||
  fail "no IPv4 default route via the IPv4 gateway: $(ip -n "se2e-$id-c" route)"
[[ -f $work/ipam/$net/fd00:252::2 ]] || fail "host-local holds no IPv6 lease"
out=$(plugin_c DEL <<<"$dual") || fail "dual-stack DEL failed: $out"
[[ ! -e $work/ipam/$net/fd00:252::2 ]] || fail "IPv6 lease not released"
[[ $(vf_holder $pci0) == free ]] || fail "VF not free after the dual-stack DEL: $(ctl vfs)"
assert_jq "$(ip -j link show "$vf0")" '.[0].address == "02:aa:bb:00:00:10"' "VF netdev home after the dual-stack DEL"

# --- sluiced keeps its word: kill -9 with a VF handed out, start again; the
# VF is still held (restored from the checkpoint), and DEL frees it
out=$(netconf 1.0.0 kernel | plugin_c ADD) || fail "ADD before the restart failed: $out"
[[ $(vf_holder $pci0) == "$cidc/net1" ]] || fail "VF not held before the restart: $(ctl vfs)"
kill -KILL "$sluiced_pid"
wait "$sluiced_pid" 2>/dev/null || true
start_sriov_sluiced
[[ $(vf_holder $pci0) == "$cidc/net1" ]] || fail "VF allocation lost across the restart: $(ctl vfs)"
grep -q "restored VF $pci0 of $cidc/net1" "$work/sluiced.log" || fail "sluiced did not say it restored the VF"
out=$(netconf 1.0.0 kernel | plugin_c DEL) || fail "DEL after the restart failed: $out"
[[ $(vf_holder $pci0) == free ]] || fail "VF not free after DEL following the restart: $(ctl vfs)"
ip link show "$vf0" >/dev/null || fail "VF netdev not back after DEL following the restart"

# --- nothing left anywhere
[[ $(port_count) == 0 ]] || fail "ports left: $(ctl ports)"
[[ $(lease_count) == 0 ]] || fail "leases left: $(find "$work/ipam" -type f)"
[[ $(record_count) == 0 ]] || fail "records left: $(find "$work/records" -type f)"
ip link show "$vf0" >/dev/null && ip link show "$vf1" >/dev/null || fail "a VF netdev is missing from the host"

# --- SIGTERM with no VF held: sluiced undoes its driver binding, putting
# back the override it found at its start and re-probing each VF. This one
# started after a kill -9, so it found its predecessor's vfio-pci (with no
# kernel here the VFs never left the stand-in driver, so it rebound them):
# a crash loses the original override.
kill -TERM "$sluiced_pid"
wait "$sluiced_pid" 2>/dev/null || true
for p in $pci0 $pci1; do
  [[ $(cat "$sys/bus/pci/devices/$p/driver_override") == vfio-pci ]] || fail "VF $p's driver_override not put back"
done
[[ $(cat "$sys/bus/pci/drivers_probe") == "$pci0" ]] || fail "VF $pci0 not re-probed at shutdown (undo runs last VF first)"
grep -q "pf sepf0: VF set-up undone (drivers restored)" "$work/sluiced.log" || fail "sluiced did not say it undid the VF set-up"
echo "PASS"
