// See node_config.h.
#include "cni-plugin/node_config.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <nlohmann/json.hpp>

#include "cni-plugin/cni_error.h"
#include "cni-plugin/confined_path.h"
#include "cni-plugin/file_util.h"
#include "cni-plugin/netconf.h"
#include "cni-plugin/text.h"

namespace sluice::cni {
namespace {

using nlohmann::json;

absl::Status invalidNodeConfig(std::string_view origin, std::string_view why) {
  return cniError(ErrorCode::kInvalidConfig, cat("node config ", origin, ": ", why));
}

absl::Status readDirectory(const json& doc, std::string_view key, std::string_view origin, std::string& out) {
  auto it = doc.find(key);
  if (it == doc.end()) return absl::OkStatus();
  std::optional<std::string> dir;
  if (it->is_string()) dir = normaliseAbsolutePath(it->get<std::string>());
  if (!dir) return invalidNodeConfig(origin, cat("\"", key, "\" must be an absolute path without \"..\" components"));
  out = *dir;
  return absl::OkStatus();
}

// "apiSockets": a non-empty array of absolute paths that fit a unix socket
// address (108 bytes with the NUL), each normalised, none twice.
absl::Status readSocketList(const json& doc, std::string_view key, std::string_view origin,
                            std::vector<std::string>& out) {
  auto it = doc.find(key);
  if (it == doc.end()) return absl::OkStatus();
  const auto bad = [&] {
    return invalidNodeConfig(origin, cat("\"", key, "\" must be a non-empty array of distinct absolute socket paths of at most ",
                               kMaxSocketPathLen, " bytes without \"..\" components"));
  };
  if (!it->is_array() || it->empty()) return bad();
  std::vector<std::string> list;
  for (const json& entry : *it) {
    std::optional<std::string> path;
    if (entry.is_string()) path = normaliseAbsolutePath(entry.get<std::string>());
    if (!path || *path == "/" || path->size() > kMaxSocketPathLen) return bad();
    if (std::find(list.begin(), list.end(), *path) != list.end()) return bad();
    list.push_back(std::move(*path));
  }
  out = std::move(list);
  return absl::OkStatus();
}

absl::Status readBool(const json& doc, std::string_view key, std::string_view origin, bool& out) {
  auto it = doc.find(key);
  if (it == doc.end()) return absl::OkStatus();
  if (!it->is_boolean()) return invalidNodeConfig(origin, cat("\"", key, "\" must be true or false"));
  out = it->get<bool>();
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<NodeConfig> parseNodeConfig(std::string_view text, std::string_view origin) {
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) return invalidNodeConfig(origin, "not a JSON object");
  // The keys, declared once: what each fills in.
  NodeConfig node;
  struct DirKey {
    std::string_view key;
    std::string NodeConfig::*field;
  };
  static constexpr DirKey kDirs[] = {{"deviceInfoDir", &NodeConfig::device_info_dir},
                                     {"logDir", &NodeConfig::log_dir},
                                     {"dataDirRoot", &NodeConfig::data_dir_root},
                                     {"socketDirRoot", &NodeConfig::socket_dir_root},
                                     {"kubeletDir", &NodeConfig::kubelet_dir}};
  struct BoolKey {
    std::string_view key;
    bool NodeConfig::*field;
  };
  static constexpr BoolKey kBools[] = {{"allowVfTrust", &NodeConfig::allow_vf_trust},
                                       {"allowVfSpoofchkOff", &NodeConfig::allow_vf_spoofchk_off},
                                       {"allowSourceValidationOff", &NodeConfig::allow_source_validation_off},
                                       {"allowSharedSocketDir", &NodeConfig::allow_shared_socket_dir}};
  static constexpr std::string_view kApiSockets = "apiSockets";
  for (const auto& item : doc.items()) {
    const std::string& key = item.key();
    bool known = false;
    for (const DirKey& d : kDirs) known = known || d.key == key;
    for (const BoolKey& b : kBools) known = known || b.key == key;
    known = known || key == "routedPrefixRanges";
    known = known || key == kApiSockets;
    // A misspelt key of a security setting must not silently fall back to a default.
    if (!known) return invalidNodeConfig(origin, cat("unknown key \"", key, "\""));
  }
  for (const DirKey& d : kDirs) {
    if (absl::Status s = readDirectory(doc, d.key, origin, node.*d.field); !s.ok()) return s;
  }
  for (const BoolKey& b : kBools) {
    if (absl::Status s = readBool(doc, b.key, origin, node.*b.field); !s.ok()) return s;
  }
  if (auto it = doc.find("routedPrefixRanges"); it != doc.end()) {
    std::vector<std::string> entries;
    bool strings = it->is_array();
    for (const json& e : strings ? *it : json::array()) {
      strings = strings && e.is_string();
      if (strings) entries.push_back(e.get<std::string>());
    }
    if (!strings) return invalidNodeConfig(origin, "\"routedPrefixRanges\" must be an array of CIDR strings");
    absl::StatusOr<PrefixRanges> ranges = parsePrefixRanges(entries);
    if (!ranges.ok()) return invalidNodeConfig(origin, cat("\"routedPrefixRanges\": ", sv(ranges.status().message())));
    node.routed_prefix_ranges = *std::move(ranges);
  }
  if (absl::Status s = readSocketList(doc, kApiSockets, origin, node.api_sockets); !s.ok()) return s;
  return node;
}

absl::StatusOr<NodeConfig> loadNodeConfig(const Environment& env) {
  std::string path(kNodeConfigPath);
  if (auto it = env.find(std::string(kNodeConfigEnv)); it != env.end() && !it->second.empty()) path = it->second;
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    if (errno == ENOENT) return NodeConfig{};
    return cniError(ErrorCode::kIoFailure, cat("node config ", path, ": ", std::strerror(errno)));
  }
  std::string text;
  char buf[4096];
  for (;;) {
    ssize_t n = read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return cniError(ErrorCode::kIoFailure, cat("node config ", path, ": ", std::strerror(errno)));
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  return parseNodeConfig(text, path);
}

}  // namespace sluice::cni
