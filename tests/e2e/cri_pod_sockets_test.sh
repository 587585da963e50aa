#!/usr/bin/env bash
# perPodSockets on the runtime path kubelet uses: a private containerd's CRI
# plugin runs sluice-cni for a pod sandbox, passing the sandbox's pod UID as
# K8S_POD_UID in CNI_ARGS, and the plugin links the port's short socket path
# to that pod's emptyDir in a simulated kubelet dir (the kubelet makes it
# before RunPodSandbox; here the test does). Asserted: RunPodSandbox → a
# sluiced port whose socket directory is a link to the pod's emptyDir; a
# sandbox whose pod declares no such volume fails RunPodSandbox (the plugin's
# code 7 naming socketVolume) and leaves no port, lease, link or sandbox;
# StopPodSandbox → link and port gone, the emptyDir left to the kubelet.
# Isolation inside containers needs a container with a mount (CRI
# CreateContainer), which our CRI client does not make; the cnitool test
# (pod_sockets_test.sh) shows it with mount namespaces of its own.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_init
for tool in containerd ctr runc; do
  command -v "$tool" >/dev/null || fail "$tool missing: run scripts/setup-e2e.sh"
done
[[ -x ${CRI_CLIENT:-} && -x ${PAUSE_BIN:-} ]] || fail "cri_client / e2e_pause not built"
here=$(dirname "${BASH_SOURCE[0]}")

kubelet=$work/kubelet
jq --arg k "$kubelet" '. + {kubeletDir: $k}' "$SLUICE_CNI_NODE_CONFIG" >"$work/node.tmp"
mv "$work/node.tmp" "$SLUICE_CNI_NODE_CONFIG"

start_sluiced 10.250.0.0/24
net=se2e-cripod-$id
ctd=$work/ctd
mkdir -p "$ctd" "$work/cni-bin" "$work/cni-conf" "$work/ipam" "$work/records"
ln -s "$SLUICE_CNI_DIR/sluice-cni" "$work/cni-bin/sluice-cni"
ln -s /usr/lib/cni/host-local "$work/cni-bin/host-local"
ln -s /usr/lib/cni/loopback "$work/cni-bin/loopback"
jq -n --arg name "$net" --arg api "$work/api.sock" --arg sd "$work/vhost" --arg dd "$work/records" \
  --arg ipam "$work/ipam" '{
    cniVersion: "1.0.0", name: $name,
    plugins: [{type: "sluice-cni", apiSocket: $api, socketDir: $sd, dataDir: $dd, logFile: ($dd + "/cni.log"),
               perPodSockets: true,
               ipam: {type: "host-local", dataDir: $ipam,
                      ranges: [[{subnet: "10.250.0.0/24", rangeStart: "10.250.0.10", rangeEnd: "10.250.0.19"}]]}}]
  }' >"$work/cni-conf/10-sluice.conflist"
# As in cri_sandbox_test.sh: restrict_oom_score_adj for runc on these
# machines, an ephemeral stream server port.
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
    bin_dir = "$work/cni-bin"
    conf_dir = "$work/cni-conf"
EOC

cri() { "$CRI_CLIENT" --endpoint "$ctd/containerd.sock" "$@"; }
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
e2e_cleanups+=("rm -f /var/lib/cni/results/$net-*")
e2e_cleanups+=("cri_cleanup")

containerd --config "$ctd/config.toml" >"$work/containerd.log" 2>&1 &
ctd_pid=$!
e2e_pids+=("$ctd_pid")
wait_until 60 cri version || {
  tail -20 "$work/containerd.log" >&2
  fail "containerd's CRI not answering within 60 s"
}
bash "$here/cri/pause_image.sh" "$PAUSE_BIN" docker.io/sluice/pause:e2e "$work/pause.tar"
ctr --address "$ctd/containerd.sock" -n k8s.io image import "$work/pause.tar" >/dev/null ||
  fail "ctr could not import the sandbox image"

# --- a pod that declares the volume: the kubelet has made its emptyDir
uid=$(cat /proc/sys/kernel/random/uuid)
vol=$kubelet/pods/$uid/volumes/kubernetes.io~empty-dir/sluice-sockets
mkdir -p "$vol"
chmod 0777 "$vol"
sb=$(cri run pod-a "$uid" default 2>"$work/cri.err") || {
  cat "$work/cri.err" >&2
  tail -20 "$work/containerd.log" >&2
  fail "RunPodSandbox failed"
}
port=$(port_of "$sb" eth0)
[[ -n $port ]] || fail "no sluiced port for sandbox $sb/eth0: $(ctl ports; cat "$work/records/cni.log")"
socket=$(jq -r .socket_path <<<"$port")
link=$(dirname "$socket")
[[ $link == "$work/vhost/"* ]] || fail "socket $socket not below socketDir"
[[ -L $link && $(readlink "$link") == "$vol" ]] ||
  fail "$link is not a link to the pod's emptyDir $vol (did containerd pass K8S_POD_UID?): $(ls -la "$work/vhost")"

# --- a pod without the volume: RunPodSandbox fails, nothing is left
uid_b=$(cat /proc/sys/kernel/random/uuid)
if cri run pod-b "$uid_b" default >"$work/cri.out" 2>"$work/cri.err"; then
  fail "RunPodSandbox succeeded for a pod without the socket volume"
fi
note "runtime error: $(head -c 400 "$work/cri.err")"
grep -q ' error ADD .*code 7: .*socketVolume' "$work/records/cni.log" ||
  fail "the plugin's ADD did not fail with code 7 naming socketVolume: $(tail -5 "$work/records/cni.log")"
[[ $(port_count) == 1 ]] || fail "a port was left by the failed sandbox: $(ctl ports)"
[[ $(find "$work/vhost" -mindepth 1 | wc -l) == 1 ]] || fail "socketDir holds more than pod-a's link: $(ls -la "$work/vhost")"
[[ $(cri list | wc -l) == 1 ]] || fail "a sandbox outlived its failed RunPodSandbox: $(cri list)"

# --- StopPodSandbox: DEL removes the port and the link, not the emptyDir
cri stop "$sb" || fail "StopPodSandbox failed"
[[ -z $(port_of "$sb" eth0) ]] || fail "port still present after StopPodSandbox: $(ctl ports)"
[[ ! -L $link && ! -e $link ]] || fail "link $link left after StopPodSandbox"
[[ -d $vol ]] || fail "the pod's emptyDir was removed (the kubelet's to remove)"
cri remove "$sb" || fail "RemovePodSandbox failed"
[[ $(port_count) == 0 ]] || fail "ports after RemovePodSandbox: $(ctl ports)"
[[ -z $(find "$work/records" -type f ! -name cni.log) ]] || fail "attachment record left"
[[ -z $(ls -A "$work/vhost") ]] || fail "socketDir not empty: $(ls -la "$work/vhost")"
echo "PASS"
