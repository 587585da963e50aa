// See pod_paths.h.
#include "cni-plugin/pod_paths.h"

#include "common/socket_name.h"

namespace sluice::cni {

std::string socketSubdir(std::string_view container_id) { return podSocketSubdir(container_id); }

bool isUnder(std::string_view path, std::string_view dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.remove_suffix(1);
  return path.size() > dir.size() + 1 && path.substr(0, dir.size()) == dir && path[dir.size()] == '/' &&
         path.find("/../") == std::string_view::npos;
}

}  // namespace sluice::cni
