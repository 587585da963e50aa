# shellcheck shell=bash
# The CRI tests' private containerd (Debian's 1.6, runc), sourced by the
# tests/e2e/cri_*_test.sh scripts after lib.sh and e2e_init. Everything lives
# under the test's work directory (root, state, socket, CNI bin and conf
# dirs), so other containerds on the machine are never touched. Paths of the
# helpers built for it come from CTest: CRI_CLIENT, PAUSE_BIN.
for tool in containerd ctr runc; do
  command -v "$tool" >/dev/null || fail "$tool missing: run scripts/setup-e2e.sh"
done
[[ -x ${CRI_CLIENT:-} && -x ${PAUSE_BIN:-} ]] || fail "cri_client / e2e_pause not built"
cri_here=$(dirname "${BASH_SOURCE[0]}")
ctd=$work/ctd

cri() { "$CRI_CLIENT" --endpoint "$ctd/containerd.sock" "$@"; }

# Writes the network containerd's CRI plugin runs for every sandbox:
# sluice-cni (cniVersion 1.0.0) with host-local addresses 10.250.0.10-19,
# its socketDir, records and log in the work directory, its sockets in the
# shared socketDir (perPodSockets false: the tests' pod UIDs are no
# UUIDs, and they declare no emptyDir). Args: the network's name, then a
# JSON object merged into the plugin's config.
cri_write_netconf() {
  local extra=${2:-}
  [[ -n $extra ]] || extra='{}'
  mkdir -p "$work/cni-conf" "$work/ipam" "$work/records"
  jq -n --arg name "$1" --argjson extra "$extra" --arg api "$work/api.sock" --arg sd "$work/vhost" \
    --arg dd "$work/records" --arg ipam "$work/ipam" '{
      cniVersion: "1.0.0", name: $name,
      plugins: [({type: "sluice-cni", apiSocket: $api, socketDir: $sd, dataDir: $dd, logFile: ($dd + "/cni.log"),
                  perPodSockets: false,
                  ipam: {type: "host-local", dataDir: $ipam,
                         ranges: [[{subnet: "10.250.0.0/24", rangeStart: "10.250.0.10", rangeEnd: "10.250.0.19"}]]}}
                 + $extra)]
    }' >"$work/cni-conf/10-sluice.conflist"
  # containerd's libcni caches results under /var/lib/cni too (removed after
  # cri_cleanup: cleanups run newest first); a failed teardown would leave
  # this network's entries there.
  e2e_cleanups+=("rm -f /var/lib/cni/results/$1-*")
}

# Runs before containerd is killed (cleanups come first): every sandbox of our
# private containerd (also those a failed RunPodSandbox left in state unknown)
# is stopped and removed through CRI, which stops and removes its containers
# and deletes its netns; shims that outlive containerd (they are its children,
# started for our sandboxes) are ended by pid; mounts under the work directory
# are lifted before it is deleted.
cri_cleanup() {
  local sb pid
  for sb in $(cri list); do
    cri stop "$sb"
    cri remove "$sb"
  done
  kill -TERM "$ctd_pid" 2>/dev/null
  for _ in $(seq 1 200); do kill -0 "$ctd_pid" 2>/dev/null || break; sleep 0.05; done
  for pid in $(grep -l -s -F -- "$ctd/containerd.sock" /proc/[0-9]*/cmdline | cut -d/ -f3); do
    kill -KILL "$pid" 2>/dev/null
  done
  awk -v w="$work/" 'index($2, w) == 1 {print $2}' /proc/mounts | sort -r | xargs -r -n1 umount -l
}

# Builds an image of static binaries (cri/oci_image.sh) and imports it.
# Args: image reference, entrypoint (a binary's base name), binaries.
cri_import_image() {
  local ref=$1 tar
  tar="$work/image-${ref//[^a-z0-9]/_}.tar"
  bash "$cri_here/oci_image.sh" "$ref" "$tar" "${@:2}" || fail "could not build the image $ref"
  ctr --address "$ctd/containerd.sock" -n k8s.io image import "$tar" >/dev/null ||
    fail "ctr could not import the image $ref"
}

# Starts containerd with its CRI plugin on our CNI dirs (Debian's plugins
# beside sluice-cni: containerd 1.6 takes one bin dir, and its CRI plugin adds
# a loopback network of its own to every sandbox) and imports the sandbox
# image. Arg: the CNI bin dir when something else puts sluice-cni there (the
# image test's install-cni); by default $work/cni-bin with this build's.
# restrict_oom_score_adj: without it runc fails on these machines ("can't get
# final child's PID from pipe"). Stream server on an ephemeral loopback port
# so that it never collides with another containerd.
cri_start_containerd() {
  local cni_bin=${1:-$work/cni-bin}
  mkdir -p "$ctd" "$cni_bin" "$work/cni-conf"
  [[ -n ${1:-} ]] || ln -s "$SLUICE_CNI_DIR/sluice-cni" "$cni_bin/sluice-cni"
  ln -s /usr/lib/cni/host-local "$cni_bin/host-local"
  ln -s /usr/lib/cni/loopback "$cni_bin/loopback"
  cat >"$ctd/config.toml" <<EOC
version = 2
root = "$ctd/root"
state = "$ctd/state"
[grpc]
  address = "$ctd/containerd.sock"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "docker.io/sluice/pause:e2e"
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$cni_bin"
    conf_dir = "$work/cni-conf"
EOC
  e2e_cleanups+=("cri_cleanup")
  containerd --config "$ctd/config.toml" >"$work/containerd.log" 2>&1 &
  ctd_pid=$!
  e2e_pids+=("$ctd_pid")
  wait_until 60 cri version || {
    tail -20 "$work/containerd.log" >&2
    fail "containerd's CRI not answering within 60 s"
  }
  cri_import_image docker.io/sluice/pause:e2e e2e_pause "$PAUSE_BIN"
}
