// See device_info.h.
#include "cni-plugin/device_info.h"

#include "cni-plugin/file_util.h"

namespace sluice::cni {

nlohmann::json vhostUserDeviceInfo(VhostMode sluiced_mode, const std::string& socket_path) {
  return {
      {"type", "vhost-user"},
      {"version", "1.1.0"},
      {"vhost-user",
       {{"mode", sluiced_mode == VhostMode::kServer ? "client" : "server"}, {"path", socket_path}}},
  };
}

absl::Status writeDeviceInfo(const ConfinedPath& path, const nlohmann::json& info) {
  // 0644: the pod (possibly not root) reads it through a downward volume.
  return writeFileAtomic(path, info.dump(), 0644);
}

absl::Status removeDeviceInfo(const ConfinedPath& path) { return removeFileIfExists(path); }

}  // namespace sluice::cni
