#!/usr/bin/env bash
# perPodSockets on the runtime path kubelet uses, with containers: a private
# containerd's CRI plugin runs sluice-cni for each pod sandbox, passing the
# sandbox's pod UID as K8S_POD_UID in CNI_ARGS, and the plugin links the
# port's short socket path to that pod's emptyDir in a simulated kubelet dir
# (the kubelet makes it before RunPodSandbox; here the test does). Each pod
# then runs a container (CRI CreateContainer, an image of static binaries
# made without a registry) that mounts its emptyDir at podSocketDir as the
# chart's example pod does, running as uid 1000 with supplementary group 2345. sluiced is the vhost-user server here (vhostMode
# "server", socketGroup 2345), so the socket in the pod's directory is
# sluiced's and connectable. Asserted, from inside the containers (CRI
# ExecSync):
#   - each container's socket directory lists exactly its own socket, of
#     group 2345 and mode 0660, and a connect to it succeeds (for uid 1000
#     only through that group and mode);
#   - pod B's socket, by sluiced's path (through the link) and by its
#     emptyDir's host path, does not exist in pod A's mount namespace (stat
#     and connect: ENOENT) while the host sees it and connects to it, and the
#     other way round;
#   - after sluiced is killed (SIGKILL) and started again, each container
#     still lists its one socket, with the same group and mode, connectable;
#   - a sandbox whose pod declares no such volume fails RunPodSandbox (the
#     plugin's code 7 naming socketVolume) and leaves no port, lease, link or
#     sandbox;
#   - StopPodSandbox: link and port gone, the emptyDir left to the kubelet.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_init
source "$(dirname "${BASH_SOURCE[0]}")/cri/cri_lib.sh"
[[ -x ${PROBE_BIN:-} ]] || fail "e2e_probe not built"

kubelet=$work/kubelet
jq --arg k "$kubelet" '. + {kubeletDir: $k}' "$SLUICE_CNI_NODE_CONFIG" >"$work/node.tmp"
mv "$work/node.tmp" "$SLUICE_CNI_NODE_CONFIG"
pod_dir=/var/run/sluice  # podSocketDir's default, where the example pod mounts its emptyDir

start_sluiced 10.250.0.0/24
net=se2e-cripod-$id
cri_write_netconf "$net" '{"perPodSockets": true, "vhostMode": "server", "socketGroup": 2345}'
cri_start_containerd
image=docker.io/sluice/probe:e2e
cri_import_image "$image" e2e_pause "$PAUSE_BIN" "$PROBE_BIN"

# Runs the probe inside container $1 (the rest: its arguments); prints what
# it printed, fails nothing by itself (its exit code is the caller's).
probe_in() {
  local ctr=$1
  shift
  cri exec "$ctr" /e2e_probe "$@"
}

# --- two pods that declare the volume, each with a container mounting it
declare -A uid vol sb ctr socket link
for pod in a b; do
  uid[$pod]=$(cat /proc/sys/kernel/random/uuid)
  vol[$pod]=$kubelet/pods/${uid[$pod]}/volumes/kubernetes.io~empty-dir/sluice-sockets
  mkdir -p "${vol[$pod]}"
  chmod 0777 "${vol[$pod]}"
  sb[$pod]=$(cri run "cripod-$pod" "${uid[$pod]}" default 2>"$work/cri.err") || {
    cat "$work/cri.err" >&2
    tail -20 "$work/containerd.log" >&2
    fail "RunPodSandbox (pod $pod) failed"
  }
  port=$(port_of "${sb[$pod]}" eth0)
  [[ -n $port ]] || fail "no sluiced port for sandbox ${sb[$pod]}/eth0: $(ctl ports; cat "$work/records/cni.log")"
  assert_jq "$port" '.vhost_mode == "VHOST_MODE_SERVER"' "vhostMode server: sluiced listens"
  socket[$pod]=$(jq -r .socket_path <<<"$port")
  link[$pod]=$(dirname "${socket[$pod]}")
  [[ ${socket[$pod]} == "$work/vhost/"* ]] || fail "socket ${socket[$pod]} not below socketDir"
  [[ -L ${link[$pod]} && $(readlink "${link[$pod]}") == "${vol[$pod]}" ]] ||
    fail "${link[$pod]} is not a link to the pod's emptyDir ${vol[$pod]} (did containerd pass K8S_POD_UID?): $(ls -la "$work/vhost")"
  # Not root: uid 1000 in the socket group (as the pod's fsGroup would put
  # it), so the socket's group and mode decide whether it may connect.
  ctr[$pod]=$(cri create "${sb[$pod]}" "cripod-$pod" "${uid[$pod]}" default app "$image" "${vol[$pod]}:$pod_dir" \
    1000:1000:2345 2>"$work/cri.err") || { cat "$work/cri.err" >&2; tail -20 "$work/containerd.log" >&2; fail "CreateContainer (pod $pod) failed"; }
  cri start "${ctr[$pod]}" || { tail -20 "$work/containerd.log" >&2; fail "StartContainer (pod $pod) failed"; }
done

# Each container sees its own socket only, with the configured group and
# mode, and can connect to it; the other pod's socket is nowhere in its mount
# namespace, by either host path, while the host reaches it.
assert_isolated() {  # when
  local pod other out
  for pod in a b; do
    other=$([[ $pod == a ]] && echo b || echo a)
    out=$(probe_in "${ctr[$pod]}" ls "$pod_dir") || fail "$1: ls $pod_dir in pod $pod failed: $out"
    [[ $out == eth0.sock ]] || fail "$1: pod $pod's $pod_dir holds '$out', not exactly its own eth0.sock"
    out=$(probe_in "${ctr[$pod]}" stat "$pod_dir/eth0.sock") || fail "$1: stat in pod $pod failed: $out"
    [[ $out == "socket 0 2345 660" ]] || fail "$1: pod $pod's socket is '$out', not 'socket 0 2345 660'"
    out=$(probe_in "${ctr[$pod]}" connect "$pod_dir/eth0.sock") ||
      fail "$1: pod $pod cannot connect to its own socket: $out"
    [[ $out == connected ]] || fail "$1: pod $pod's connect said '$out'"
    for path in "${socket[$other]}" "${vol[$other]}/eth0.sock"; do
      out=$("$PROBE_BIN" stat "$path") || fail "$1: the host cannot stat pod $other's $path: $out"
      [[ $out == "socket 0 2345 660" ]] || fail "$1: on the host pod $other's $path is '$out'"
      if out=$(probe_in "${ctr[$pod]}" stat "$path"); then fail "$1: pod $pod sees pod $other's $path: $out"; fi
      [[ $out == ENOENT ]] || fail "$1: pod $pod's stat of $path failed with '$out', not ENOENT"
    done
    # The emptyDir's own path is too long for a unix socket address (the
    # reason for the link): only sluiced's short path can be connected to.
    out=$("$PROBE_BIN" connect "${socket[$other]}") || fail "$1: the host cannot connect to pod $other's socket: $out"
    if out=$(probe_in "${ctr[$pod]}" connect "${socket[$other]}"); then fail "$1: pod $pod connected to pod $other's socket"; fi
    [[ $out == ENOENT ]] || fail "$1: pod $pod's connect to ${socket[$other]} failed with '$out', not ENOENT"
  done
}
assert_isolated "after RunPodSandbox"

# --- sluiced killed and started again: it re-creates both sockets in the
# pods' emptyDirs, with the same group and mode, and no CNI call is made.
adds_before=$(grep -c ' ADD ' "$work/records/cni.log")
kill -KILL "$sluiced_pid"
wait "$sluiced_pid" 2>/dev/null || true
start_sluiced 10.250.0.0/24
[[ $(port_count) == 2 ]] || fail "sluiced restored $(port_count) ports, not 2: $(ctl ports)"
assert_isolated "after sluiced's restart"
[[ $(grep -c ' ADD ' "$work/records/cni.log") == "$adds_before" ]] || fail "a CNI ADD ran during the restart"

# --- a pod without the volume: RunPodSandbox fails, nothing is left
uid_c=$(cat /proc/sys/kernel/random/uuid)
if cri run "cripod-c" "$uid_c" default >"$work/cri.out" 2>"$work/cri.err"; then
  fail "RunPodSandbox succeeded for a pod without the socket volume"
fi
note "runtime error: $(head -c 400 "$work/cri.err")"
grep -q ' error ADD .*code 7: .*socketVolume' "$work/records/cni.log" ||
  fail "the plugin's ADD did not fail with code 7 naming socketVolume: $(tail -5 "$work/records/cni.log")"
[[ $(port_count) == 2 ]] || fail "a port was left by the failed sandbox: $(ctl ports)"
[[ $(find "$work/vhost" -mindepth 1 | wc -l) == 2 ]] || fail "socketDir holds more than the two pods' links: $(ls -la "$work/vhost")"
[[ $(cri list | wc -l) == 2 ]] || fail "a sandbox outlived its failed RunPodSandbox: $(cri list)"

# --- StopPodSandbox: DEL removes the port and the link, not the emptyDir
for pod in a b; do
  cri stop "${sb[$pod]}" || fail "StopPodSandbox (pod $pod) failed"
  [[ -z $(port_of "${sb[$pod]}" eth0) ]] || fail "pod $pod's port still present after StopPodSandbox: $(ctl ports)"
  [[ ! -L ${link[$pod]} && ! -e ${link[$pod]} ]] || fail "link ${link[$pod]} left after StopPodSandbox"
  [[ -d ${vol[$pod]} ]] || fail "pod $pod's emptyDir was removed (the kubelet's to remove)"
  cri remove "${sb[$pod]}" || fail "RemovePodSandbox (pod $pod) failed"
done
[[ $(port_count) == 0 ]] || fail "ports after RemovePodSandbox: $(ctl ports)"
[[ -z $(find "$work/records" -type f ! -name cni.log) ]] || fail "attachment record left"
[[ -z $(ls -A "$work/vhost") ]] || fail "socketDir not empty: $(ls -la "$work/vhost")"
echo "PASS"
