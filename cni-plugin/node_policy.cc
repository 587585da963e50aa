// See node_policy.h.
#include "cni-plugin/node_policy.h"

#include "cni-plugin/cni_error.h"
#include "cni-plugin/text.h"

namespace sluice::cni {
namespace {

absl::Status refused(std::string_view field, const absl::Status& why) {
  return cniError(ErrorCode::kInvalidConfig, cat("network config: \"", field, "\" ", sv(why.message())));
}

}  // namespace

absl::StatusOr<ConfinedPath> confineDataDir(const NetConf& conf, const NodeConfig& node) {
  absl::StatusOr<ConfinedPath> p = confinePath(conf.data_dir, node.data_dir_root, /*allow_root=*/true);
  if (!p.ok()) return refused("dataDir", p.status());
  return p;
}

absl::StatusOr<ConfinedPath> confineSocketDir(const NetConf& conf, const NodeConfig& node) {
  absl::StatusOr<ConfinedPath> p = confinePath(conf.socket_dir, node.socket_dir_root, /*allow_root=*/true);
  if (!p.ok()) return refused("socketDir", p.status());
  return p;
}

absl::StatusOr<std::optional<ConfinedPath>> confineDeviceInfoFile(std::string_view path, const NodeConfig& node) {
  if (path.empty()) return std::optional<ConfinedPath>();
  absl::StatusOr<ConfinedPath> p = confinePath(path, node.device_info_dir, /*allow_root=*/false);
  if (!p.ok()) return refused("runtimeConfig.CNIDeviceInfoFile", p.status());
  return std::optional<ConfinedPath>(std::move(*p));
}

absl::StatusOr<std::optional<ConfinedPath>> confineLogFile(const NetConf& conf, const NodeConfig& node) {
  if (conf.log_file.empty()) return std::optional<ConfinedPath>();
  absl::StatusOr<ConfinedPath> p = confinePath(conf.log_file, node.log_dir, /*allow_root=*/false);
  if (!p.ok()) return refused("logFile", p.status());
  return std::optional<ConfinedPath>(std::move(*p));
}

absl::Status checkVfCaps(const NetConf& conf, const NodeConfig& node) {
  if (conf.interface_type != InterfaceType::kSriov) return absl::OkStatus();
  if (conf.trust && !node.allow_vf_trust) {
    return cniError(ErrorCode::kInvalidConfig,
                    "network config: \"trust\" \"on\" is not allowed on this node (node config allowVfTrust)");
  }
  if (!conf.spoof_check && !node.allow_vf_spoofchk_off) {
    return cniError(ErrorCode::kInvalidConfig,
                    "network config: \"spoofchk\" \"off\" is not allowed on this node (node config allowVfSpoofchkOff)");
  }
  return absl::OkStatus();
}

absl::Status checkRoutedPrefixes(const NetConf& conf, const NodeConfig& node) {
  if (conf.routed_prefixes.empty()) return absl::OkStatus();
  if (conf.routed_prefixes_from_pod && !conf.allow_pod_routed_prefixes) {
    return cniError(ErrorCode::kInvalidConfig,
                    "args.cni.routedPrefixes: this network does not let pods name routed prefixes (network config "
                    "allowPodRoutedPrefixes is not true)");
  }
  const std::string_view field = conf.routed_prefixes_from_pod ? "args.cni.routedPrefixes" : "routedPrefixes";
  for (const std::string& text : conf.routed_prefixes) {
    std::optional<std::string> special;
    bool allowed = false;
    // parseNetConf normalised every entry to a CIDR of one family.
    if (auto v4 = Ipv4Cidr::parse(text)) {
      special = specialRangeOf(*v4);
      allowed = node.routed_prefix_ranges.holds(*v4);
    } else if (auto v6 = Ipv6Cidr::parse(text)) {
      special = specialRangeOf(*v6);
      allowed = node.routed_prefix_ranges.holds(*v6);
    }
    if (special) return cniError(ErrorCode::kInvalidConfig, cat(field, ": ", text, " overlaps ", *special));
    if (!allowed) {
      return cniError(ErrorCode::kInvalidConfig,
                      node.routed_prefix_ranges.empty()
                          ? cat(field, ": ", text, " is not allowed: this node allows no routed prefixes (node config "
                                "routedPrefixRanges is empty)")
                          : cat(field, ": ", text, " is outside this node's routedPrefixRanges (",
                                node.routed_prefix_ranges.toString(), ")"));
    }
  }
  return absl::OkStatus();
}

absl::Status checkSourceValidation(const NetConf& conf, const NodeConfig& node) {
  if (conf.interface_type != InterfaceType::kVhostUser || conf.source_validation ||
      node.allow_source_validation_off) {
    return absl::OkStatus();
  }
  return cniError(ErrorCode::kInvalidConfig,
                  "network config: \"sourceValidation\" false is not allowed on this node (node config "
                  "allowSourceValidationOff)");
}

absl::StatusOr<std::string> confineApiSocket(const NetConf& conf, const NodeConfig& node) {
  // parseNodeConfig never leaves the list empty; a NodeConfig built in code
  // might, and then no socket is allowed rather than any.
  if (conf.api_socket.empty() && !node.api_sockets.empty()) return node.api_sockets.front();
  const std::optional<std::string> wanted = normaliseAbsolutePath(conf.api_socket);
  for (const std::string& allowed : node.api_sockets) {
    if (wanted && *wanted == allowed) return allowed;
  }
  std::string list;
  for (const std::string& allowed : node.api_sockets) list.append(list.empty() ? "" : ", ").append(allowed);
  return cniError(ErrorCode::kInvalidConfig,
                  cat("network config: \"apiSocket\" ", conf.api_socket,
                      " is not a sluiced API socket of this node (node config apiSockets: ", list, ")"));
}

absl::Status checkSharedSocketDir(const NodeConfig& node, std::string_view why) {
  if (node.allow_shared_socket_dir) return absl::OkStatus();
  return cniError(ErrorCode::kInvalidConfig,
                  cat("network config: ", why, ", so the pod's sockets would go below the shared \"socketDir\", "
                      "which is not allowed on this node (node config allowSharedSocketDir); use \"perPodSockets\" "
                      "with a runtime that passes K8S_POD_UID"));
}

}  // namespace sluice::cni
