#!/usr/bin/env bash
# The CNI configs clusters already have: one network per spec version from
# 0.3.1 to 1.1.0, against the real sluiced with Debian's host-local, each
# through ADD → CHECK (where the version has it) → DEL → DEL again. 0.3.1,
# 0.4.0 and 1.0.0 are driven by upstream cnitool (libcni converts and caches
# the results as runtimes do, and passes the cached one as CHECK's
# prevResult: 0.4.0's with each address's "version"); 1.1.0 by executing
# the plugin the way a runtime does, since Debian's libcni speaks only up to
# 1.0.0. Each ADD result has its version's form: "cniVersion" echoed, "ips"
# entries with "version" before 1.0.0 only, socketPath in 1.1.0 only. CHECK
# on 0.3.1 (libcni itself refuses to send it) is sent to the plugin directly
# and must fail with code 1.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_init
[[ -x ${CNITOOL:-} ]] || fail "cnitool not found at '${CNITOOL:-}': run scripts/setup-e2e.sh"

start_sluiced 10.250.0.0/24
export CNI_IFNAME=net1

# Runs the plugin as a runtime would: $1 = CNI_COMMAND, $2 = container id,
# $3 = netns, stdin = the config; prints its stdout.
plugin() {
  CNI_COMMAND=$1 CNI_CONTAINERID=$2 CNI_NETNS=$3 CNI_IFNAME=net1 \
    CNI_ARGS="IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=e2e" "$SLUICE_CNI_DIR/sluice-cni" 2>>"$work/plugin.log"
}

# Asserts ADD's result has exactly the form of version $2 and matches the
# port sluiced made for container $3; prints the address.
check_result() {
  local result=$1 v=$2 cid=$3 netns=$4 keys ip port
  assert_jq "$result" ".cniVersion == \"$v\"" "$v: result version"
  assert_jq "$result" '.interfaces | length == 1' "$v: one interface"
  keys='["mac","name","sandbox"]'
  [[ $v == 1.1.0 ]] && keys='["mac","mtu","name","sandbox","socketPath"]'
  assert_jq "$result" ".interfaces[0] | keys == $keys" "$v: interface fields"
  assert_jq "$result" ".interfaces[0].sandbox == \"$netns\"" "$v: interface sandbox is the netns"
  assert_jq "$result" '.ips | length == 1' "$v: one address"
  if [[ $v == 0.* ]]; then
    assert_jq "$result" '.ips[0] | keys == ["address","gateway","interface","version"] and .version == "4"' \
      "$v: the address carries its family"
  else
    assert_jq "$result" '.ips[0] | keys == ["address","gateway","interface"]' "$v: the address has no family"
  fi
  assert_jq "$result" '.ips[0].interface == 0 and .ips[0].gateway == "10.250.0.1"' "$v: address of the interface"
  ip=$(jq -r '.ips[0].address' <<<"$result")
  ip=${ip%/24}
  port=$(port_of "$cid" net1)
  [[ -n $port ]] || fail "$v: no sluiced port for $cid/net1 after ADD: $(ctl ports)"
  assert_jq "$port" ".ip == \"$ip\"" "$v: port IP equals the result's"
  assert_jq "$port" ".mac == $(jq '.interfaces[0].mac' <<<"$result")" "$v: port MAC equals the result's"
  if [[ $v == 1.1.0 ]]; then
    assert_jq "$port" ".socket_path == $(jq '.interfaces[0].socketPath' <<<"$result")" "$v: socketPath is the port's"
  fi
  echo "$ip"
}

# Asserts the attachment of network $1 at address $2 is gone entirely.
check_gone() {
  local net=$1 ip=$2 v=$3
  [[ $(port_count) == 0 ]] || fail "$v: sluiced still has ports after DEL: $(ctl ports)"
  [[ ! -e $work/ipam/$net/$ip ]] || fail "$v: host-local lease for $ip not released"
  [[ -z $(find "$work/records" -type f ! -name cni.log) ]] || fail "$v: attachment record left: $(find "$work/records" -type f)"
}

octet=40
for v in 0.3.1 0.4.0 1.0.0; do
  net=se2e-v${v//./}-$id
  write_netconf "$net" "$v" "10.250.0.$octet" "10.250.0.$((octet + 9))"
  new_netns "v${v//./}" netns
  cid=$(cnitool_container_id "$netns")

  result=$("$CNITOOL" add "$net" "$netns") || fail "$v: cnitool add failed: $result"
  ip=$(check_result "$result" "$v" "$cid" "$netns")
  [[ $ip =~ ^10\.250\.0\.$((octet / 10))[0-9]$ ]] || fail "$v: address $ip outside the network's range"
  [[ -f $work/ipam/$net/$ip ]] || fail "$v: host-local holds no lease for $ip"

  if [[ $v == 0.3.1 ]]; then
    conf=$(jq -c '.plugins[0] + {cniVersion, name}' "$work/net.d/$net.conflist")
    if out=$(plugin CHECK "$cid" "$netns" <<<"$(jq -c --argjson r "$result" '. + {prevResult: $r}' <<<"$conf")"); then
      fail "$v: CHECK succeeded although 0.3.1 has no CHECK"
    fi
    assert_jq "$out" '.code == 1 and .cniVersion == "0.3.1"' "$v: CHECK refused as an incompatible version"
    assert_jq "$out" '.msg == "CHECK needs cniVersion 0.4.0 or later, config says 0.3.1"' "$v: CHECK refusal names the versions"
    [[ -n $(port_of "$cid" net1) ]] || fail "$v: the refused CHECK changed the attachment"
  else
    out=$("$CNITOOL" check "$net" "$netns" 2>&1) || fail "$v: cnitool check failed: $out"
  fi

  out=$("$CNITOOL" del "$net" "$netns" 2>&1) || fail "$v: cnitool del failed: $out"
  check_gone "$net" "$ip" "$v"
  out=$("$CNITOOL" del "$net" "$netns" 2>&1) || fail "$v: second cnitool del failed: $out"
  [[ $(port_count) == 0 ]] || fail "$v: second DEL changed sluiced's ports"
  octet=$((octet + 10))
done

# --- 1.1.0, executed directly
v=1.1.0
net=se2e-v110-$id
write_netconf "$net" "$v" 10.250.0.70 10.250.0.79
conf=$(jq -c '.plugins[0] + {cniVersion, name, mtu: 1500}' "$work/net.d/$net.conflist")
new_netns v110 netns
cid=e2e-v110-$id
result=$(plugin ADD "$cid" "$netns" <<<"$conf") || fail "$v: ADD failed: $result"
ip=$(check_result "$result" "$v" "$cid" "$netns")
[[ $ip =~ ^10\.250\.0\.7[0-9]$ ]] || fail "$v: address $ip outside the network's range"
with_prev=$(jq -c --argjson r "$result" '. + {prevResult: $r}' <<<"$conf")
out=$(plugin CHECK "$cid" "$netns" <<<"$with_prev") || fail "$v: CHECK failed: $out"
out=$(plugin DEL "$cid" "$netns" <<<"$with_prev") || fail "$v: DEL failed: $out"
check_gone "$net" "$ip" "$v"
out=$(plugin DEL "$cid" "$netns" <<<"$conf") || fail "$v: repeated DEL failed: $out"
echo "PASS"
