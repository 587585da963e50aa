// A pod port's files in the socket directory: its vhost-user socket and,
// when the request names a socket_subdir, the pod's directory holding it.
// One place that makes them for a new port (AddPort, restore) and removes
// them again (DeletePort, garbage collection, a restore that finds the pod
// gone), so the rules below hold for every path:
//  - a pod directory is reached only through a descriptor (a pod that
//    mounts the socket dir may have swapped it for a symlink), and DPDK is
//    given the socket's path through that descriptor;
//  - only a server-mode socket is sluiced's to unlink, and in a pod
//    directory only a socket is removed;
//  - a directory is removed only when empty.
// Control thread only (within a change); no state of its own.
#pragma once

#include <absl/status/statusor.h>

#include <string>

#include "dataplane/core/pod_socket_dir.h"
#include "dataplane/core/port_request.h"

namespace sluice {

// Where a new port's socket lives, ready for the backend to bind or connect.
struct PortFiles {
  PodSocketDir dir;       // the pod's directory, held open (none without socket_subdir)
  std::string open_path;  // the path the backend binds or connects to
};

// Opens (making it if missing) the pod directory of `req` in `socket_dir`,
// and removes a server socket left at `socket_path` by a sluiced that died
// (bind() would fail on it). `socket_path` lies in the socket directory, as
// vhostSocketPath validated it.
absl::StatusOr<PortFiles> preparePortFiles(const std::string& socket_dir, const PortRequest& req,
                                           const std::string& socket_path);
// Undoes preparePortFiles after the port could not be made: removes the
// directory only if that call made it.
void undoPortFiles(PortFiles& files);
// Gives a new server socket the group `req` names (mode 0660), so that a
// non-root pod can connect; every time it is made (AddPort and restore).
absl::Status setPortSocketGroup(const PortRequest& req, const PortFiles& files);
// Removes a closed port's server socket (`server`) and its pod directory if
// that is empty now.
void removePortFiles(PodSocketDir& dir, const std::string& socket_path, bool server);
// The same for a port that was never opened again (its pod vanished while
// sluiced was down): the directory, if any, is opened without making it.
void removeOrphanedPortFiles(const std::string& socket_dir, const PortRequest& req, const std::string& socket_path);
// Whether a watched pod netns path (empty: none) proves its pod gone: only
// "no such file" does; any other error proves nothing.
bool netnsVanished(const std::string& netns);

}  // namespace sluice
