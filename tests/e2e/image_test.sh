#!/usr/bin/env bash
# The container image built and run as the DaemonSet runs it, with no Docker
# engine and no registry: scripts/build-image.sh makes debian:12 and
# debian:12-slim from Debian's packages and builds the image with buildah (the
# Dockerfile's runtime stage on the programs of this build: see the script's
# --from-build); its contents are checked (tests/packaging/check-image.sh);
# the OCI archive goes into a private containerd (`ctr images import`), which
# runs the rendered manifest's (manifests/sluice.yaml) init containers and
# sluiced container with that pod's commands, args, environment, privileges,
# host network and mounts. hostPath volumes live under the work directory
# (the host's /sys and /var/run/netns excepted), so nothing of the machine's
# own /var/run/sluice, /opt/cni/bin or /etc is touched. Then: the startup probe's
# command passes inside the container, install-cni has copied the image's
# sluice-cni onto the host's CNI directory, and a CRI pod sandbox of the same
# containerd attaches through that copy to the sluiced in the container.
# SLUICE_IMAGE_FROM_SOURCE=1 builds the programs inside the image instead (the
# Dockerfile's own build stage: slow, a whole compile without ccache, so not
# what ctest runs; the same checks follow).
# Exits 77 (skipped) where the image builder is not installed.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
for tool in buildah mmdebstrap; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool missing (scripts/setup-e2e.sh installs it)"; exit 77; }
done
e2e_init
command -v python3 >/dev/null || fail "python3 missing: run scripts/setup-e2e.sh"
source "$here/cri/cri_lib.sh"
[[ -d ${SLUICE_BUILD_DIR:-} ]] || fail "SLUICE_BUILD_DIR not set (run through ctest)"

# --- Build. vfs storage of our own, outside the work dir, made afresh (base
# images included) unless SLUICE_IMAGE_STORAGE names one to keep between runs.
tag=sluice:e2e-$id
image=docker.io/library/$tag
if [[ -n ${SLUICE_IMAGE_STORAGE:-} ]]; then
  store=$SLUICE_IMAGE_STORAGE
else
  store=$(mktemp -d /var/tmp/sluice-image-e2e.XXXXXX)
  e2e_cleanups+=("rm -rf '$store'")
fi
bah() { buildah --storage-driver vfs --root "$store/root" --runroot "$store/run" "$@"; }
e2e_cleanups+=("bah rmi -f '$tag'")
from_build=(--from-build "$SLUICE_BUILD_DIR")
[[ ${SLUICE_IMAGE_FROM_SOURCE:-0} != 1 ]] || from_build=()
bash "$repo/scripts/build-image.sh" --root "$store" --tag "$tag" --oci-archive "$work/sluice.tar" \
  "${from_build[@]}" >"$work/build.log" 2>&1 || { tail -40 "$work/build.log" >&2; fail "build-image.sh failed"; }
grep '^build-image.sh: ' "$work/build.log" >&2

# --- Contents.
ctr_id=$(bah from --pull=never "$tag")
mnt=$(bah mount "$ctr_id")
bah inspect --type image "$tag" | jq '.Docker.config' >"$work/image-config.json"
bash "$repo/tests/packaging/check-image.sh" "$mnt" "$work/image-config.json" || fail "image contents"
cni_sum=$(sha256sum <"$mnt/usr/local/bin/sluice-cni")
bah umount "$ctr_id" >/dev/null
bah rm "$ctr_id" >/dev/null

# --- The DaemonSet's pod and ConfigMap, from the rendered manifest.
python3 -c 'import json, sys, yaml; json.dump([d for d in yaml.safe_load_all(sys.stdin) if d], sys.stdout)' \
  <"$repo/manifests/sluice.yaml" >"$work/manifest.json"
pod=$(jq -c '.[] | select(.kind == "DaemonSet") | .spec.template.spec' "$work/manifest.json")
[[ -n $pod ]] || fail "no DaemonSet in manifests/sluice.yaml"
config_map=$(jq -r '[.[] | select(.kind == "DaemonSet") | .spec.template.spec.volumes[] | select(.name == "config")][0].configMap.name' "$work/manifest.json")
mkdir -p "$work/volumes/config"
jq -r --arg n "$config_map" '.[] | select(.kind == "ConfigMap" and .metadata.name == $n) | .data | keys[]' "$work/manifest.json" |
  while read -r key; do
    jq -j --arg n "$config_map" --arg k "$key" '.[] | select(.kind == "ConfigMap" and .metadata.name == $n) | .data[$k]' \
      "$work/manifest.json" >"$work/volumes/config/$key"
  done
[[ -f $work/volumes/config/default.json ]] || fail "ConfigMap $config_map has no default.json"

# A volume's directory on this host: a hostPath under $work/host (but /sys
# and /var/run/netns, which sluiced needs as they are), an emptyDir under
# $work/volumes, the ConfigMap's files.
host_dir_of() {
  local v
  v=$(jq -c --arg n "$1" '.volumes[] | select(.name == $n)' <<<"$pod")
  if jq -e .hostPath <<<"$v" >/dev/null; then
    local p
    p=$(jq -r .hostPath.path <<<"$v")
    case $p in
      /sys | /var/run/netns) echo "$p" ;;
      *) mkdir -p "$work/host$p" && echo "$work/host$p" ;;
    esac
  elif jq -e .configMap <<<"$v" >/dev/null; then
    echo "$work/volumes/config"
  else
    mkdir -p "$work/volumes/$1" && echo "$work/volumes/$1"
  fi
}

# `ctr run` options for container $1 of the pod (an init container or not):
# its mounts, environment (the downward API's node name and host IP), and
# privileges; printed one per line.
run_opts_of() {
  local c m src dst opt
  c=$(jq -c --arg n "$1" '(.initContainers + .containers)[] | select(.name == $n)' <<<"$pod")
  while read -r m; do
    src=$(host_dir_of "$(jq -r .name <<<"$m")")
    dst=$(jq -r .mountPath <<<"$m")
    # The pods' socket directories are mounted where they are on the host (the
    # plugin and sluiced must name the same paths): moved, they stay so.
    case $(jq -r .name <<<"$m") in vhost-sockets | kubelet-pods) dst=$src ;; esac
    opt=rbind:rw
    [[ $(jq -r '.readOnly // false' <<<"$m") == true ]] && opt=rbind:ro
    [[ $(jq -r '.mountPropagation // ""' <<<"$m") == HostToContainer ]] && opt+=:rslave
    echo "--mount=type=bind,src=$src,dst=$dst,options=$opt"
  done < <(jq -c '.volumeMounts[]?' <<<"$c")
  while read -r e; do
    case $e in
      NODE_NAME) echo "--env=NODE_NAME=image-e2e-node" ;;
      HOST_IP) echo "--env=HOST_IP=127.0.0.1" ;;
      *) fail "container $1: environment variable $e not handled by the test" ;;
    esac
  done < <(jq -r '.env[]?.name' <<<"$c")
  [[ $(jq -r '.securityContext.privileged // false' <<<"$c") == true ]] && echo --privileged
  [[ $(jq -r '.securityContext.readOnlyRootFilesystem // false' <<<"$c") == true ]] && echo --read-only
  true
}
# Its command and args, each ended by a NUL (the scripts span lines).
argv_of() { jq -j --arg n "$1" '(.initContainers + .containers)[] | select(.name == $n) | ((.command // []) + (.args // []))[] | (., "\u0000")' <<<"$pod"; }

# --- A private containerd (cri_lib.sh): the DaemonSet's containers in a
# namespace of our own, CRI sandboxes (namespace k8s.io) with the CNI
# directory install-cni fills.
ns=sluice-image-e2e-$id
cni_bin=$(host_dir_of cni-bin)
mkdir -p "$work/cni-conf" "$work/ipam" "$work/records"
run_dir=$(host_dir_of run)
vhost_dir=$(host_dir_of vhost-sockets)
# sluiced's socket directory follows its volume's move (above); the rest of
# the ConfigMap stays as rendered.
jq --arg d "$vhost_dir" '."socket-dir" = $d' "$work/volumes/config/default.json" >"$work/default.json"
mv "$work/default.json" "$work/volumes/config/default.json"
pod_cidr=$(jq -r '."pod-cidr"' "$work/volumes/config/default.json")
net=se2e-image-$id
allow_api_socket "$run_dir/sluice.sock"
# The test's pod UIDs are no UUIDs: the shared socket directory, which the
# node config of lib.sh allows (allowSharedSocketDir).
jq -n --arg name "$net" --arg api "$run_dir/sluice.sock" --arg sd "$vhost_dir" --arg dd "$work/records" \
  --arg ipam "$work/ipam" --arg subnet "$pod_cidr" '{
    cniVersion: "1.0.0", name: $name,
    plugins: [{type: "sluice-cni", apiSocket: $api, socketDir: $sd, dataDir: $dd, logFile: ($dd + "/cni.log"),
               perPodSockets: false,
               ipam: {type: "host-local", dataDir: $ipam, ranges: [[{subnet: $subnet}]]}}]
  }' >"$work/cni-conf/10-sluice.conflist"
c() { ctr --address "$ctd/containerd.sock" -n "$ns" "$@"; }
# Before cri_cleanup stops containerd (cleanups run newest first): the
# sandboxes, while sluiced still answers their DEL, then the sluiced task
# (TERM: it removes its sockets) and its container.
image_cleanup() {
  local sb
  for sb in $(cri list); do
    cri stop "$sb"
    cri remove "$sb"
  done
  c task kill -s TERM "sluiced-$id"
  for _ in $(seq 1 200); do c task ls | grep -q "^sluiced-$id .*RUNNING" || break; sleep 0.1; done
  c task kill -s KILL "sluiced-$id"
  c task delete -f "sluiced-$id"
  c containers rm "sluiced-$id"
}
# The host-side plugin's allowed roots are the work directory's (lib.sh);
# containerd passes its environment on to the plugin.
cri_start_containerd "$cni_bin"
e2e_cleanups+=("rm -f /var/lib/cni/results/$net-*")
e2e_cleanups+=("image_cleanup")

c images import --base-name "${image%:*}" "$work/sluice.tar" >"$work/import.log" 2>&1 || { cat "$work/import.log" >&2; fail "ctr images import"; }
c images ls -q | grep -qx "$image" || fail "the OCI archive did not import as $image: $(c images ls -q)"
note "imported: $(c images ls | grep -F "$image" | tr -s ' ')"

# --- The pod's init containers, in order, as the DaemonSet runs them.
for init in $(jq -r '.initContainers[].name' <<<"$pod"); do
  mapfile -t opts < <(run_opts_of "$init")
  mapfile -t -d '' argv < <(argv_of "$init")
  c run --rm --net-host "${opts[@]}" "$image" "init-$init-$id" "${argv[@]}" >"$work/init-$init.log" 2>&1 ||
    { cat "$work/init-$init.log" >&2; fail "init container $init failed"; }
  note "init container $init: $(tr '\n' ' ' <"$work/init-$init.log")"
done
# install-cni: the image's plugin, byte for byte, and the node config.
[[ -x $cni_bin/sluice-cni && $(sha256sum <"$cni_bin/sluice-cni") == "$cni_sum" ]] ||
  fail "install-cni did not copy the image's sluice-cni into the host's CNI directory"
cmp -s "$(host_dir_of host-etc-sluice)/cni.json" "$work/volumes/config/cni.json" ||
  fail "install-cni did not install the ConfigMap's cni.json"
[[ -z $(find "$cni_bin" "$(host_dir_of host-etc-sluice)" -name '.*.tmp') ]] || fail "install-cni left temporary files"

# --- sluiced, with the container's command and args.
mapfile -t opts < <(run_opts_of sluiced)
mapfile -t -d '' argv < <(argv_of sluiced)
c run -d --net-host "${opts[@]}" "$image" "sluiced-$id" "${argv[@]}" >/dev/null || fail "ctr run sluiced failed"
in_sluiced() { c task exec --exec-id "x$RANDOM$RANDOM" "sluiced-$id" "$@"; }
mapfile -t probe < <(jq -r '.containers[] | select(.name == "sluiced") | .startupProbe.exec.command[]' <<<"$pod")
probe_ok() { in_sluiced "${probe[@]}"; }
wait_until 120 probe_ok || { c task ls >&2; fail "the startup probe (${probe[*]}) did not pass within 120 s"; }
note "startup probe passed: $(in_sluiced "${probe[@]}" 2>&1 | tr '\n' ' ')"
ctl() { in_sluiced /usr/local/bin/sluicectl --socket /var/run/sluice/sluice.sock --timeout 10000 "$@"; }
[[ -S $run_dir/sluice.sock ]] || fail "sluiced's API socket is not on the host's run directory"

# --- A CRI pod sandbox attached through the copied plugin.
sb=$(cri run pod-a "uid-a-$id" default 2>"$work/cri.err") || { cat "$work/cri.err" >&2; fail "RunPodSandbox failed"; }
port=$(port_of "$sb" eth0)
[[ -n $port ]] || fail "no port in the container's sluiced for sandbox $sb: $(ctl ports)"
ip=$(jq -r .ip <<<"$port")
status=$(cri status "$sb") || fail "PodSandboxStatus failed"
assert_jq "$status" '.status.state == "SANDBOX_READY"' "sandbox ready"
assert_jq "$status" ".status.network.ip == \"$ip\"" "the sandbox's IP is the port's ($ip)"
grep -q " ADD ${sb:0:8}" "$work/records/cni.log" || fail "the copied plugin logged no ADD for $sb: $(cat "$work/records/cni.log")"
cri stop "$sb" || fail "StopPodSandbox failed"
[[ -z $(port_of "$sb" eth0) ]] || fail "port still present after StopPodSandbox"
cri remove "$sb" || fail "RemovePodSandbox failed"
[[ $(port_count) == 0 ]] || fail "ports after RemovePodSandbox: $(ctl ports)"
echo "PASS"
