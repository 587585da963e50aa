// The node's own settings for sluice-cni: which host directories a network
// config may name, and what a network config may ask of an SR-IOV VF. The
// network config comes from whoever may write a NetworkAttachmentDefinition;
// this file comes from the node's administrator (a host file, like the
// plugin binary itself), so it bounds what the former can make the root-run
// plugin do. It is optional: without it the defaults below apply. Only the
// process environment (tests, an unusual host layout) can move it; nothing in
// a network config can. Used by the single thread of the sluice-cni process.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "cni-plugin/cni_env.h"
#include "common/prefix_ranges.h"

namespace sluice::cni {

inline constexpr std::string_view kNodeConfigPath = "/etc/sluice/cni.json";
// The environment variable that names another node config file.
inline constexpr std::string_view kNodeConfigEnv = "SLUICE_CNI_NODE_CONFIG";

struct NodeConfig {
  // runtimeConfig.CNIDeviceInfoFile must be below this: the directory where
  // Multus (the NPWG implementation) puts CNI plugins' device-info files.
  std::string device_info_dir{"/var/run/k8s.cni.cncf.io/devinfo/cni"};
  // logFile must be below this: a directory of sluice's own, so a network
  // config cannot append to another program's log (or any other file).
  std::string log_dir{"/var/log/sluice"};
  // dataDir must be this or below it: libcni's state directory, where the
  // default /var/lib/cni/sluice lives.
  std::string data_dir_root{"/var/lib/cni"};
  // socketDir must be this or below it: sluiced's runtime directory, where
  // its default --socket-dir /var/run/sluice/vhost lives. ADD creates the
  // per-pod socket directories there (and the socketDir itself if missing)
  // and DEL removes them, so a network config must not point them elsewhere.
  std::string socket_dir_root{"/var/run/sluice"};
  // The kubelet's root directory (its --root-dir): a network config with
  // perPodSockets links a pod's socket directory to that pod's emptyDir
  // below it, and sluiced (as root) then makes, unlinks or connects to the
  // socket there. Only the node's administrator names it: from a network
  // config it would point that link, and sluiced, at any host directory.
  std::string kubelet_dir{"/var/lib/kubelet"};
  // Whether a network config may ask for a VF with trust on (the VF may then
  // change its own MAC, enter promiscuous mode) or with spoof checking off
  // (it may send with any source MAC). Both widen what a pod can do on the
  // physical network, so the node must opt in.
  bool allow_vf_trust = false;
  bool allow_vf_spoofchk_off = false;
  // "routedPrefixRanges": the CIDRs (both families) a network's or pod's
  // routed prefixes must lie inside. Every node routes such a prefix to the
  // pod, so only the administrator may say which; empty (the default)
  // allows none.
  PrefixRanges routed_prefix_ranges;
  // Whether a network config may turn sluiced's source validation off
  // ("sourceValidation": false): the pod may then send as the gateway, as
  // other pods or as any address, so the node must opt in, as for VFs.
  bool allow_source_validation_off = false;
  // Whether a vhost-user attachment may put its sockets in the shared
  // socketDir (perPodSockets false, or a runtime that passes no
  // K8S_POD_UID), which every such pod hostPath-mounts: the pods then share
  // one directory tree, so the node must opt in.
  bool allow_shared_socket_dir = false;
  // The sluiced API sockets a network config may name ("apiSocket"); the
  // first is the one used when it names none. The plugin sends every
  // attachment's details to that socket and trusts its answer, so a network
  // config must not point it at a socket of someone else's (another pod's
  // emptyDir on the host, say). Never empty; normalised absolute paths.
  std::vector<std::string> api_sockets{"/var/run/sluice/sluice.sock"};
};

// Reads the node config from $SLUICE_CNI_NODE_CONFIG or kNodeConfigPath;
// a file that does not exist gives the defaults. Unreadable: code 5;
// malformed, an unknown key, a relative directory: code 7 naming the file.
absl::StatusOr<NodeConfig> loadNodeConfig(const Environment& env);
absl::StatusOr<NodeConfig> parseNodeConfig(std::string_view text, std::string_view origin);

}  // namespace sluice::cni
