// The network config as the node config allows it: each host path it names
// confined to the node's directory for it, the sluiced API socket to one the
// node lists, and the settings that widen what a pod may do (SR-IOV VF caps,
// source validation off, the shared socket directory) checked against the
// node's consent. A refusal is code 7 naming the field and the node config
// key. Used by the dispatcher and ADD (the single thread of the sluice-cni
// process).
#pragma once

#include <optional>
#include <string>
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
// sourceValidation false (vhost-user) unless node.allow_source_validation_off.
absl::Status checkSourceValidation(const NetConf& conf, const NodeConfig& node);
// The API socket to reach sluiced at: the config's "apiSocket" if it is one
// of node.api_sockets (compared after normalisation), the first of them when
// the config names none; any other is refused.
absl::StatusOr<std::string> confineApiSocket(const NetConf& conf, const NodeConfig& node);
// A vhost-user attachment whose sockets would go below the shared socketDir
// (`why` says what led there) unless node.allow_shared_socket_dir.
absl::Status checkSharedSocketDir(const NodeConfig& node, std::string_view why);

}  // namespace sluice::cni
