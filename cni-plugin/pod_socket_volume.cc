// See pod_socket_volume.h.
#include "cni-plugin/pod_socket_volume.h"

#include <sys/un.h>

#include <cctype>

#include "cni-plugin/pod_paths.h"
#include "cni-plugin/text.h"
#include "common/socket_name.h"

namespace sluice::cni {
namespace {

bool isHex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

// The longest RFC 1123 label (and so Kubernetes volume name).
constexpr size_t kMaxVolumeNameLen = 63;

}  // namespace

absl::Status validatePodUid(std::string_view uid) {
  auto all_hex = [](std::string_view s) {
    for (char c : s) {
      if (!isHex(c)) return false;
    }
    return true;
  };
  bool ok = false;
  if (uid.size() == 32) {
    ok = all_hex(uid);
  } else if (uid.size() == 36) {
    ok = uid[8] == '-' && uid[13] == '-' && uid[18] == '-' && uid[23] == '-' && all_hex(uid.substr(0, 8)) &&
         all_hex(uid.substr(9, 4)) && all_hex(uid.substr(14, 4)) && all_hex(uid.substr(19, 4)) &&
         all_hex(uid.substr(24, 12));
  }
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(asv(cat("K8S_POD_UID \"", uid.substr(0, 64),
                                            "\" is not a pod UID (8-4-4-4-12 or 32 hex digits)")));
}

absl::Status validateVolumeName(std::string_view name) {
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  bool ok = !name.empty() && name.size() <= kMaxVolumeNameLen && alnum(name.front()) && alnum(name.back());
  for (char c : name) ok = ok && (alnum(c) || c == '-');
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(
      asv(cat("must be a volume name (1..63 of a-z, 0-9, '-', alphanumeric at both ends), got \"",
              name.substr(0, 80), "\"")));
}

absl::StatusOr<ConfinedPath> emptyDirHostPath(std::string_view kubelet_dir, std::string_view uid,
                                              std::string_view volume) {
  if (absl::Status s = validatePodUid(uid); !s.ok()) return s;
  if (absl::Status s = validateVolumeName(volume); !s.ok()) return s;
  // Both names are single plain components by now, so the path below the
  // root is exactly these five components.
  absl::StatusOr<ConfinedPath> root = confinePath(kubelet_dir, kubelet_dir, /*allow_root=*/true);
  if (!root.ok()) return root.status();
  return root->child("pods").child(uid).child("volumes").child(kEmptyDirPluginDir).child(volume);
}

std::string podSocketLinkName(std::string_view container_id, std::string_view ifname) {
  return sluice::podSocketLinkName(container_id, ifname);
}

std::string socketFileName(std::string_view ifname) {
  return cat(ifnameFileComponent(std::string(ifname)), ".sock");
}

absl::StatusOr<std::string> podSideSocketPath(std::string_view pod_socket_dir, std::string_view ifname) {
  std::string dir(pod_socket_dir);
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  std::string path = cat(dir == "/" ? "" : dir, "/", socketFileName(ifname));
  if (path.size() >= sizeof(sockaddr_un::sun_path)) {
    return absl::InvalidArgumentError(asv(cat("the pod's socket path ", path, " exceeds the ",
                                              sizeof(sockaddr_un::sun_path) - 1, "-byte unix socket limit")));
  }
  return path;
}

}  // namespace sluice::cni
