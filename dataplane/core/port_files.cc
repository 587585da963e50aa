#include "dataplane/core/port_files.h"

#include <absl/strings/str_cat.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "common/socket_name.h"
#include "dataplane/core/socket_owner.h"

namespace sluice {
namespace {

// The socket's file name within its directory.
std::string fileOf(const std::string& socket_path) { return socket_path.substr(socket_path.rfind('/') + 1); }

// A subdirectory named after the attachment is the pod's volume, which may
// be a symlink sluiced made itself; any other is never followed.
bool isPodVolumeLink(const PortRequest& req) {
  return req.socket_subdir == podSocketLinkName(req.attachment.container_id, req.attachment.ifname);
}

void removeSocketFile(const PodSocketDir& dir, const std::string& socket_path) {
  if (dir.isOpen()) {
    dir.removeSocket(fileOf(socket_path));
  } else {
    ::unlink(socket_path.c_str());
  }
}

}  // namespace

absl::StatusOr<PortFiles> preparePortFiles(const std::string& socket_dir, const PortRequest& req,
                                           const std::string& socket_path) {
  PortFiles files{{}, socket_path};
  if (!req.socket_subdir.empty()) {
    absl::StatusOr<PodSocketDir> opened =
        PodSocketDir::open(socket_dir, req.socket_subdir, isPodVolumeLink(req), PodSocketDir::Create::kIfMissing);
    if (!opened.ok()) return opened.status();
    files.dir = std::move(*opened);
    files.open_path = files.dir.pathOf(fileOf(socket_path));
  }
  if (req.vhost_mode != VhostMode::kClient) removeSocketFile(files.dir, socket_path);
  return files;
}

void undoPortFiles(PortFiles& files) {
  if (files.dir.made()) files.dir.closeAndRemoveIfEmpty();
}

absl::Status setPortSocketGroup(const PortRequest& req, const PortFiles& files) {
  if (req.vhost_mode == VhostMode::kClient || !req.socket_group) return absl::OkStatus();
  absl::Status s = setSocketGroupAndMode(files.open_path, *req.socket_group, 0660);
  if (s.ok()) return s;
  return absl::Status(s.code(), absl::StrCat("socket_group: ", s.message()));
}

void removePortFiles(PodSocketDir& dir, const std::string& socket_path, bool server) {
  if (server && !socket_path.empty()) removeSocketFile(dir, socket_path);
  dir.closeAndRemoveIfEmpty();  // only if empty
}

void removeOrphanedPortFiles(const std::string& socket_dir, const PortRequest& req, const std::string& socket_path) {
  const bool server = req.vhost_mode == VhostMode::kServer;
  if (req.socket_subdir.empty()) {
    if (server) ::unlink(socket_path.c_str());
    return;
  }
  absl::StatusOr<PodSocketDir> dir =
      PodSocketDir::open(socket_dir, req.socket_subdir, isPodVolumeLink(req), PodSocketDir::Create::kNever);
  if (dir.ok()) removePortFiles(*dir, socket_path, server);
}

bool netnsVanished(const std::string& netns) {
  struct stat st {};
  return !netns.empty() && ::stat(netns.c_str(), &st) != 0 && errno == ENOENT;
}

}  // namespace sluice
