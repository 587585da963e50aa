# shellcheck shell=bash
# Shared helpers of the end-to-end tests (sourced by the *_test.sh scripts in
# this folder; runs in the test's shell). A test calls e2e_init first: it makes
# a private work directory and registers one EXIT trap that undoes everything
# the helpers created (processes, network namespaces, libcni cache entries,
# directories), whether the test passed, failed or was interrupted.
#
# Paths of the binaries under test come from CTest's environment (see
# CMakeLists.txt): SLUICED, SLUICECTL, SLUICE_CNI_DIR, PVP_TRAFFIC, CNITOOL.
set -euo pipefail

e2e_pids=()      # processes we started, killed (TERM, then KILL) at exit
e2e_netns=()     # network namespaces we created
e2e_cleanups=()  # extra commands run at exit, newest first
work=

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# Where a step's evidence lives when an assertion fails.
note() { echo "-- $*" >&2; }

e2e_cleanup() {
  local rc=$? i
  set +e
  for ((i = ${#e2e_cleanups[@]} - 1; i >= 0; i--)); do eval "${e2e_cleanups[i]}" >/dev/null 2>&1; done
  for pid in "${e2e_pids[@]}"; do
    kill -TERM "$pid" 2>/dev/null || continue
    # sluiced closes its ports and removes its sockets on SIGTERM; give it the
    # time it needs, then insist.
    for _ in $(seq 1 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  for ns in "${e2e_netns[@]}"; do ip netns del "$ns" 2>/dev/null; done
  # 77: the test skipped itself (CTest's SKIP_RETURN_CODE), nothing to show.
  if ((rc != 0 && rc != 77)) && [[ -n $work ]]; then
    for log in "$work"/sluiced.log "$work"/*/sluiced.log; do
      [[ -f $log ]] || continue
      echo "-- ${log#"$work"/} (tail):" >&2
      tail -30 "$log" >&2
    done
  fi
  if [[ -n ${SLUICE_TEST_KEEP:-} ]]; then
    echo "-- kept $work" >&2
  else
    [[ -n $work ]] && rm -rf "$work"
  fi
  exit "$rc"
}

e2e_init() {
  [[ $(id -u) -eq 0 ]] || fail "needs root (network namespaces, sluiced's EAL)"
  local v
  for v in SLUICED SLUICECTL SLUICE_CNI_DIR; do
    [[ -n ${!v:-} ]] || fail "$v not set (run through ctest)"
  done
  [[ -x $SLUICED && -x $SLUICECTL && -x $SLUICE_CNI_DIR/sluice-cni ]] || fail "binaries under test not built"
  [[ -x /usr/lib/cni/host-local ]] || fail "/usr/lib/cni/host-local missing: run scripts/setup.sh"
  command -v jq >/dev/null || fail "jq missing: run scripts/setup-e2e.sh"
  # Short: vhost-user socket paths must fit in 107 bytes, socketDir in 63.
  work=$(mktemp -d /tmp/se2e.XXXXXX)
  chmod 0755 "$work"
  trap e2e_cleanup EXIT
  trap 'exit 130' INT TERM
  id=${work##*.}
  export CNI_PATH="$SLUICE_CNI_DIR:/usr/lib/cni"
  # The plugin keeps the paths a network config names (dataDir, logFile,
  # device-info file, socketDir) inside the directories its node config allows; the
  # tests' live under the work directory. Exported, so that the runtimes the
  # tests start (cnitool, containerd) pass it on to the plugin. cnitool
  # passes no K8S_POD_UID, so sockets go below the shared socketDir, which
  # the node must allow; start_sluiced lists each sluiced's API socket.
  jq -n --arg w "$work" '{deviceInfoDir: $w, logDir: $w, dataDirRoot: $w, socketDirRoot: $w,
                          allowSharedSocketDir: true, apiSockets: [$w + "/api.sock"]}' >"$work/node-cni.json"
  export SLUICE_CNI_NODE_CONFIG="$work/node-cni.json"
}

# Polls a command until it succeeds or `secs` pass: a condition wait.
wait_until() {
  local secs=$1
  shift
  local deadline=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || return 1
    sleep 0.05
  done
}

# A test with two nodes sets node_dir (start_sluiced, write_netconf and ctl
# then use that node's sluiced); one node lives in $work itself.
node_dir=

ctl() { "$SLUICECTL" --socket "${node_dir:-$work}/api.sock" --timeout 10000 "$@"; }

sluiced_healthy() { ctl health; }

# Adds $1 to the node config's apiSockets (the sluiced API sockets a network
# config may name), once.
allow_api_socket() {
  jq --arg s "$1" '.apiSockets = ((.apiSockets // []) + [$s] | unique)' "$SLUICE_CNI_NODE_CONFIG" >"$work/node.tmp"
  mv "$work/node.tmp" "$SLUICE_CNI_NODE_CONFIG"
}

# Starts sluiced on the pod CIDR $1 with its API and vhost sockets in $work;
# further arguments are more sluiced options (e.g. --pod-cidr-v6 CIDR).
start_sluiced() {
  # Its own state dir: the default /var/lib/sluice checkpoint would bring back
  # ports of whatever ran before.
  local d=${node_dir:-$work}
  mkdir -p "$d"
  allow_api_socket "$d/api.sock"
  "$SLUICED" --api-socket "$d/api.sock" --socket-dir "$d/vhost" --state-dir "$d/state" --pod-cidr "$1" \
    --main-core 0 --pmd-cores 1 --max-ports 8 --mbufs 16384 \
    --eal "--no-huge --no-pci -m 512 --no-shconf --file-prefix=se2e-$id${node_dir:+-${node_dir##*/}}" "${@:2}" \
    >"$d/sluiced.log" 2>&1 &
  sluiced_pid=$!
  e2e_pids+=("$sluiced_pid")
  wait_until 60 sluiced_healthy || fail "sluiced not healthy within 60 s"
}

# Creates netns se2e-<id>-$1 and stores its path in the variable named $2 (not
# printed: a command substitution's subshell would lose the cleanup entry).
new_netns() {
  local ns="se2e-$id-$1"
  ip netns add "$ns"
  e2e_netns+=("$ns")
  printf -v "$2" '%s' "/var/run/netns/$ns"
}

# The network config list cnitool loads by name from $NETCONFPATH.
# Args: network name, cniVersion, host-local rangeStart, rangeEnd, and
# optionally an IPv6 subnet: a second range set (dual-stack, gateway its
# first host). The IPv4 subnet is 10.250.0.0/24 (gateway .1) unless
# netconf_subnet and netconf_gateway say otherwise.
write_netconf() {
  local d=${node_dir:-$work}
  mkdir -p "$work/net.d" "$d/ipam" "$d/records"
  export NETCONFPATH="$work/net.d"
  jq -n --arg name "$1" --arg v "$2" --arg api "$d/api.sock" --arg sd "$d/vhost" \
    --arg dd "$d/records" --arg ipam "$d/ipam" --arg rs "$3" --arg re "$4" --arg v6 "${5:-}" \
    --arg subnet "${netconf_subnet:-10.250.0.0/24}" --arg gw "${netconf_gateway:-10.250.0.1}" '{
      cniVersion: $v, name: $name,
      plugins: [{
        type: "sluice-cni", apiSocket: $api, socketDir: $sd, dataDir: $dd, logFile: ($dd + "/cni.log"),
        ipam: {type: "host-local", dataDir: $ipam,
               ranges: ([[{subnet: $subnet, rangeStart: $rs, rangeEnd: $re, gateway: $gw}]]
                        + (if $v6 == "" then [] else [[{subnet: $v6}]] end))}
      }]
    }' >"$work/net.d/$1.conflist"
  # libcni caches results under /var/lib/cni (cnitool cannot move it): drop
  # whatever this network left there.
  e2e_cleanups+=("rm -f /var/lib/cni/results/$1-*")
}

# The sluiced port of an attachment as JSON ("" when there is none).
port_of() {
  ctl --json ports | jq -c --arg c "$1" --arg i "$2" \
    '.ports[]? | select(.attachment.container_id == $c and .attachment.ifname == $i)'
}

port_count() { ctl --json ports | jq '.ports | length'; }

# cnitool's container id for a netns path: "cnitool-" + the first 10 bytes of
# the SHA-512 of the absolute path, in hex (cnitool.go).
cnitool_container_id() {
  echo "cnitool-$(printf '%s' "$1" | sha512sum | cut -c1-20)"
}

# Asserts a jq expression holds for a JSON document; prints the document if not.
assert_jq() {
  local doc=$1 expr=$2 what=$3
  jq -e "$expr" <<<"$doc" >/dev/null || {
    note "$doc"
    fail "$what ($expr)"
  }
}

# Writes a pcap of 32 64-byte UDP frames (60 bytes without the FCS) from
# 10.250.0.10 to 10.250.0.11, from MAC $3 to MAC $2 (the gateway's, as a
# pod's IP stack addresses them), UDP source ports 1000..1031. Built as hex
# and turned into bytes by xxd.
write_udp_pcap() {  # file gateway-mac source-mac
  local i sum src dst gw=${2//:/} mac=${3//:/}
  le32() { printf '%02x%02x%02x%02x' $(($1 & 255)) $(($1 >> 8 & 255)) $(($1 >> 16 & 255)) $(($1 >> 24 & 255)); }
  src=$(printf '%02x' 10 250 0 10)
  dst=$(printf '%02x' 10 250 0 11)
  # IPv4 header checksum: one's complement of the one's-complement sum of
  # the header's 16-bit words.
  sum=$((0x4500 + 46 + 0x4011 + 0x0afa + 0x000a + 0x0afa + 0x000b))
  sum=$(((sum & 0xffff) + (sum >> 16)))
  sum=$(((sum & 0xffff) + (sum >> 16)))
  {
    echo "$(le32 0xa1b2c3d4)02000400$(le32 0)$(le32 0)$(le32 65535)$(le32 1)"
    for ((i = 0; i < 32; i++)); do
      echo "$(le32 0)$(le32 0)$(le32 60)$(le32 60)${gw}${mac}0800"
      printf '4500%04x000000004011%04x%s%s' 46 $((~sum & 0xffff)) "$src" "$dst"
      printf '%04x%04x%04x0000%036d\n' $((1000 + i)) 2000 26 0
    done
  } | xxd -r -p >"$1"
}
