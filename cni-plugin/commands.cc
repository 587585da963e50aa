// See commands.h (shared helpers; each verb has its own file).
#include "cni-plugin/commands.h"

#include "cni-plugin/file_util.h"
#include "common/socket_name.h"
#include "cni-plugin/text.h"

namespace sluice::cni {

void removePodSocket(const CommandContext& c, const std::string& subdir, const std::string& ifname) {
  if (!c.socket_dir) {
    c.log.warn("the pod socket directory is not touched (the node refuses this socketDir)");
    return;
  }
  // A record's names come from a file: each must be one path component.
  // The socket's name spells the interface name as sluiced does.
  const std::string sock_name = cat(ifnameFileComponent(ifname), ".sock");
  for (const std::string& name : {subdir, sock_name}) {
    if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos) {
      c.log.warn(cat("pod socket \"", subdir, "/", sock_name, "\" is not a name of ours; not touched"));
      return;
    }
  }
  const ConfinedPath dir = c.socket_dir->child(subdir);
  if (absl::Status s = removeSocketIfExists(dir.child(sock_name)); !s.ok()) c.log.warn(std::string(s.message()));
  if (absl::Status s = removeDirIfEmpty(dir); !s.ok()) c.log.warn(std::string(s.message()));
}

void removePodSocketLink(const CommandContext& c, const std::string& subdir, const std::string& target) {
  if (!c.socket_dir) return;  // removePodSocket has said so
  if (subdir.empty() || subdir == "." || subdir == ".." || subdir.find('/') != std::string::npos) return;
  if (absl::Status s = removeSymlinkTo(c.socket_dir->child(subdir), target); !s.ok()) {
    c.log.warn(std::string(s.message()));
  }
}

v1::Attachment toAttachment(const std::string& container_id, const std::string& ifname) {
  v1::Attachment a;
  a.set_container_id(container_id);
  a.set_ifname(ifname);
  return a;
}

}  // namespace sluice::cni
