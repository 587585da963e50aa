// See commands.h (shared helpers; each verb has its own file).
#include "cni-plugin/commands.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cni-plugin/text.h"
#include "cni-plugin/pod_paths.h"

namespace sluice::cni {

void removePodSocket(const NetConf& conf, const std::string& subdir, const std::string& ifname,
                     Logger& log) {
  const std::string sock = podSocketPath(conf.socket_dir, subdir, ifname);
  struct stat st {};
  if (lstat(sock.c_str(), &st) == 0 && S_ISSOCK(st.st_mode) && unlink(sock.c_str()) != 0 && errno != ENOENT) {
    log.warn(cat("cannot remove ", sock, ": ", std::strerror(errno)));
  }
  const std::string dir = podSocketDir(conf.socket_dir, subdir);
  if (rmdir(dir.c_str()) != 0 && errno != ENOENT && errno != ENOTEMPTY && errno != EEXIST) {
    log.warn(cat("cannot remove ", dir, ": ", std::strerror(errno)));
  }
}

v1::Attachment toAttachment(const std::string& container_id, const std::string& ifname) {
  v1::Attachment a;
  a.set_container_id(container_id);
  a.set_ifname(ifname);
  return a;
}

}  // namespace sluice::cni
