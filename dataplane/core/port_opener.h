// Opens a pod's port for a validated request: its files in the socket
// directory (port_files.h), the DPDK port, the socket's group and the MTU.
// Whatever it made is undone when a later step fails, so a failed AddPort or
// restore leaves nothing behind. No state of its own; control thread only,
// within a change.
#pragma once

#include <absl/status/statusor.h>

#include <cstdint>
#include <string>

#include "dataplane/core/pod_socket_dir.h"
#include "dataplane/core/port_backend.h"
#include "dataplane/core/port_request.h"

namespace sluice {

struct OpenedPort {
  CreatedPort dpdk;
  PodSocketDir socket_dir;  // the pod's directory, held open (none without socket_subdir)
};

// Opens port `port_no` for `req` on `socket_path` (empty for a vdev) in
// sluiced's `socket_dir`.
absl::StatusOr<OpenedPort> openPort(PortBackend& backend, const std::string& socket_dir, uint16_t port_no,
                                    const PortRequest& req, const std::string& socket_path);

}  // namespace sluice
