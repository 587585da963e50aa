// The NPWG device-info file (Device Information Specification 1.1.0) that
// tells the pod's DPDK application where its vhost-user socket is. Multus
// hands us its path as runtimeConfig.CNIDeviceInfoFile and copies the content
// into the pod's network-status annotation. Used by the single thread of the
// sluice-cni process.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "cni-plugin/confined_path.h"
#include "cni-plugin/netconf.h"

namespace sluice::cni {

// The device-info object. The spec states "mode" from the pod application's
// side: "client" = the host created the socket and the app attaches, i.e.
// sluiced is the vhost *server*; "server" = the app creates it (sluiced is
// the vhost client).
nlohmann::json vhostUserDeviceInfo(VhostMode sluiced_mode, const std::string& socket_path);

// `path` has been confined to the node's device-info directory.
absl::Status writeDeviceInfo(const ConfinedPath& path, const nlohmann::json& info);
absl::Status removeDeviceInfo(const ConfinedPath& path);

}  // namespace sluice::cni
