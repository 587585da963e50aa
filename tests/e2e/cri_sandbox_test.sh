#!/usr/bin/env bash
# The runtime path kubelet uses: a private containerd (Debian's 1.6, runc) whose
# CRI plugin runs sluice-cni (cniVersion 1.0.0, host-local) for every pod
# sandbox, driven over CRI by our cri_client as kubelet would:
# RunPodSandbox → sluiced has a port for the sandbox, and the sandbox's status
# shows the interface and address → a second sandbox, traffic between the two
# through sluiced → StopPodSandbox → port, socket and lease
# gone → RemovePodSandbox → still nothing (containerd repeats DEL, the second
# time with an empty CNI_NETNS).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_init
source "$(dirname "${BASH_SOURCE[0]}")/cri/cri_lib.sh"

start_sluiced 10.250.0.0/24
net=se2e-cri-$id
cri_write_netconf "$net"
cri_start_containerd

# --- RunPodSandbox: the CRI plugin runs sluice-cni ADD
sb=$(cri run pod-a "uid-a-$id" default 2>"$work/cri.err") || {
  cat "$work/cri.err" >&2
  tail -20 "$work/containerd.log" >&2
  fail "RunPodSandbox failed"
}
port=$(port_of "$sb" eth0)
[[ -n $port ]] || fail "no sluiced port for sandbox $sb/eth0: $(ctl ports)"
socket=$(jq -r .socket_path <<<"$port")
# No vhostMode in the network config: sluiced is the vhost-user client, the
# pod creates the socket in the directory the plugin made.
assert_jq "$port" '.vhost_mode == "VHOST_MODE_CLIENT"' "sluiced's port is a vhost-user client by default"
[[ -d $(dirname "$socket") ]] || fail "pod socket directory $(dirname "$socket") missing"
ip=$(jq -r .ip <<<"$port")
[[ $ip == 10.250.0.10 ]] || fail "port address $ip is not host-local's first"
assert_jq "$port" '.attachment.ifname == "eth0"' "containerd's interface name"

status=$(cri status "$sb") || fail "PodSandboxStatus failed"
assert_jq "$status" '.status.state == "SANDBOX_READY"' "sandbox ready"
assert_jq "$status" ".status.network.ip == \"$ip\"" "the sandbox's IP is the port's"
info=$(jq -r '.info.info' <<<"$status")
assert_jq "$info" ".cniResult.Interfaces.eth0.Mac == $(jq .mac <<<"$port")" \
  "the sandbox's CNI result names eth0 with the port's MAC"
pod_netns=$(jq -r '.runtimeSpec.linux.namespaces[] | select(.type == "network") | .path' <<<"$info")
[[ -e $pod_netns ]] || fail "the sandbox's netns '$pod_netns' does not exist"
assert_jq "$info" ".cniResult.Interfaces.eth0.Sandbox == \"$pod_netns\"" "eth0 is in the sandbox's netns"

# --- Traffic between two sandboxes' ports through sluiced: the pods' DPDK side
# is bench/node/pvp_traffic (10.250.0.10 → 10.250.0.11, both pods in one
# process, so two busy-polling processes at most), listening on the sockets
# (virtio_user server=1) for sluiced to connect.
if [[ -n ${PVP_TRAFFIC:-} ]]; then
  sb_b=$(cri run pod-b "uid-b-$id" default) || fail "RunPodSandbox (pod-b) failed"
  port_b=$(port_of "$sb_b" eth0)
  [[ -n $port_b ]] || fail "no sluiced port for sandbox $sb_b: $(ctl ports)"
  assert_jq "$port_b" '.ip == "10.250.0.11"' "pod-b's address"
  gw_mac=$(ctl --json health | jq -r .gateway_mac)
  gen=$("$PVP_TRAFFIC" --sock-a "$socket" --sock-b "$(jq -r .socket_path <<<"$port_b")" --gateway-mac "$gw_mac" \
    --server 1 --warmup 0.5 --seconds 1 2>"$work/pvp.log" | tail -1) || { cat "$work/pvp.log" >&2; fail "pvp_traffic failed"; }
  note "generator between the sandboxes' ports: $gen"
  assert_jq "$gen" '.received > 0' "pod-b's port received pod-a's traffic"
  stats=$(ctl --json stats)
  assert_jq "$stats" "[.ports[] | select(.port_no == $(jq .port_no <<<"$port_b")) | .tx_packets | tonumber] | .[0] > 0" \
    "sluiced counted what it sent to pod-b"
  cri stop "$sb_b" || fail "StopPodSandbox (pod-b) failed"
  cri remove "$sb_b" || fail "RemovePodSandbox (pod-b) failed"
  [[ -z $(port_of "$sb_b" eth0) ]] || fail "pod-b's port outlived its sandbox"
  [[ -n $(port_of "$sb" eth0) ]] || fail "pod-a's port went with pod-b's sandbox"
else
  note "built without SLUICE_BENCH: no traffic generator, the traffic step is left out"
fi

# --- StopPodSandbox: DEL releases the port, its socket and the address
cri stop "$sb" || fail "StopPodSandbox failed"
[[ -z $(port_of "$sb" eth0) ]] || fail "port still present after StopPodSandbox: $(ctl ports)"
[[ ! -e $socket ]] || fail "socket $socket left after StopPodSandbox"
[[ ! -e $work/ipam/$net/$ip ]] || fail "host-local lease for $ip not released"

# --- RemovePodSandbox: nothing comes back
cri remove "$sb" || fail "RemovePodSandbox failed"
[[ $(port_count) == 0 ]] || fail "ports after RemovePodSandbox: $(ctl ports)"
[[ -z $(find "$work/records" -type f ! -name cni.log) ]] || fail "attachment record left"
[[ ! -e $pod_netns ]] || fail "the sandbox's netns $pod_netns outlived RemovePodSandbox"
# Both teardown calls reached the plugin: the first deleted the port, the
# repeated one (RemovePodSandbox) found nothing and still succeeded.
grep -q " DEL .*port deleted" "$work/records/cni.log" || fail "no DEL deleted the port: $(cat "$work/records/cni.log")"
grep -q " DEL .*no port" "$work/records/cni.log" || fail "containerd's repeated DEL not seen: $(cat "$work/records/cni.log")"

# --- ADD failing inside the runtime: sluiced down. RunPodSandbox fails with
# the plugin's "try again later" (11); containerd's DEL after the failed ADD
# and the plugin's own undo leave no lease, no sandbox, no netns, and no record but a pending delete.
kill -TERM "$sluiced_pid"
wait "$sluiced_pid" || true
netns_before=$(ls /var/run/netns)
if cri run pod-c "uid-c-$id" default >"$work/cri.out" 2>"$work/cri.err"; then
  fail "RunPodSandbox succeeded with sluiced down"
fi
note "runtime error: $(cat "$work/cri.err")"
grep -q ' error ADD .*code 11' "$work/records/cni.log" || fail "the plugin's ADD did not fail with code 11"
sed -n '/ error ADD .*code 11/,$p' "$work/records/cni.log" | grep -q ' DEL ' ||
  fail "containerd did not call DEL after the failed ADD"
[[ -z $(cri list) ]] || fail "a sandbox outlived its failed RunPodSandbox: $(cri list)"
[[ -z $(find "$work/ipam/$net" -type f -name '10.*') ]] || fail "leases left: $(ls "$work/ipam/$net")"
# A DEL that cannot reach sluiced keeps the attachment's record as a pending
# delete (the next call that reaches sluiced finishes it); any other record
# left would be a leak.
for f in $(find "$work/records" -type f ! -name cni.log); do
  grep -Eq '"pendingDelete": ?true' "$f" || fail "attachment record left after a failed ADD: $f: $(cat "$f")"
done
[[ $(ls /var/run/netns) == "$netns_before" ]] || fail "netns left after a failed RunPodSandbox"
echo "PASS"
