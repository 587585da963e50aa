// The network config as the node config allows it: each host path it names
// confined to the node's directory for it, and the SR-IOV VF settings it
// asks for checked against the node's caps. A refusal is code 7 naming the
// field. Used by the dispatcher (the single thread of the sluice-cni process).
#pragma once

#include <optional>
#include <string_view>

#include "absl/status/statusor.h"
#include "cni-plugin/confined_path.h"
#include "cni-plugin/netconf.h"
#include "cni-plugin/node_config.h"

namespace sluice::cni {

// The records' root ("dataDir"): node.data_dir_root or below.
absl::StatusOr<ConfinedPath> confineDataDir(const NetConf& conf, const NodeConfig& node);
// The vhost-user sockets' directory ("socketDir"): node.socket_dir_root or below.
absl::StatusOr<ConfinedPath> confineSocketDir(const NetConf& conf, const NodeConfig& node);
// A device-info file (runtimeConfig.CNIDeviceInfoFile, or one a record kept
// from ADD): below node.device_info_dir. nullopt for an empty path.
absl::StatusOr<std::optional<ConfinedPath>> confineDeviceInfoFile(std::string_view path, const NodeConfig& node);
// "logFile": below node.log_dir. nullopt when the config names none.
absl::StatusOr<std::optional<ConfinedPath>> confineLogFile(const NetConf& conf, const NodeConfig& node);
// trust on / spoofchk off (sriov only) unless the node allows them.
absl::Status checkVfCaps(const NetConf& conf, const NodeConfig& node);
// Routed prefixes: the pod's own (cni-args) only on a network with
// allowPodRoutedPrefixes; each outside the special ranges and inside the
// node's routedPrefixRanges.
absl::Status checkRoutedPrefixes(const NetConf& conf, const NodeConfig& node);

}  // namespace sluice::cni
