// The CNI verbs sluice-cni implements, each a function over one invocation's
// parsed inputs, plus the helpers they share. The dispatcher builds the
// CommandContext; the verbs never touch the process environment, stdin or
// stdout themselves. Used by the single thread of the sluice-cni process.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cni-plugin/attachment_store.h"
#include "cni-plugin/cni_env.h"
#include "cni-plugin/confined_path.h"
#include "cni-plugin/dataplane_client.h"
#include "cni-plugin/ipam_delegate.h"
#include "cni-plugin/logger.h"
#include "cni-plugin/netconf.h"
#include "cni-plugin/node_config.h"

namespace sluice::cni {

struct CommandContext {
  const CniEnv& env;             // validated CNI_* variables
  const NetConf& conf;           // validated network config
  std::string_view stdin_data;   // the raw config, passed on to IPAM as is
  Logger& log;                   // stderr or the config's logFile
  DataplaneClient& dataplane;    // sluiced at the node's API socket the config names
  AttachmentStore& store;        // this network's attachment records
  IpamDelegate* ipam;            // null when the config has no "ipam"
  const NodeConfig& node;        // what the node allows (paths, sockets, caps)
  // runtimeConfig.CNIDeviceInfoFile inside the node's device-info directory;
  // nullopt when the runtime gave none (or, for DEL, one the node refuses).
  const std::optional<ConfinedPath>& device_info_file;
  // conf.socket_dir inside the node's socketDirRoot; nullopt only for a DEL
  // whose socketDir the node refuses (nothing there is touched then).
  const std::optional<ConfinedPath>& socket_dir;
};

// ADD: the result object to print.
absl::StatusOr<nlohmann::json> runAdd(CommandContext& ctx);
absl::Status runDel(CommandContext& ctx);
absl::Status runCheck(CommandContext& ctx);
absl::Status runStatus(CommandContext& ctx);
absl::Status runGc(CommandContext& ctx);

// Shared by ADD's undo, DEL and GC: removes <socketDir>/<subdir>/<ifname>.sock
// if it is a socket, then the pod directory if that left it empty (another
// interface of the same pod may still have its socket there). Both are
// reached below ctx.socket_dir without following symlinks: pods mount the
// socket directory and may plant them.
void removePodSocket(const CommandContext& ctx, const std::string& subdir, const std::string& ifname);

// Shared by ADD's undo, DEL and GC: removes the link <socketDir>/<subdir>
// (perPodSockets) if it is a symlink to `target`, or to anything when
// `target` is empty (a record-less DEL; a symlink at one of our names is
// never followed, only removed). The pod's emptyDir it points to is the
// kubelet's, and goes with the pod.
void removePodSocketLink(const CommandContext& ctx, const std::string& subdir, const std::string& target);

v1::Attachment toAttachment(const std::string& container_id, const std::string& ifname);

}  // namespace sluice::cni
