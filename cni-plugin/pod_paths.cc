// See pod_paths.h.
#include "cni-plugin/pod_paths.h"

#include <cctype>
#include <cstdint>
#include <cstdio>

#include "cni-plugin/text.h"

namespace sluice::cni {
namespace {

// 12 characters: what docker and crictl show as a short container id.
constexpr size_t kPrefixLen = 12;

uint32_t fnv1a(std::string_view s) {
  uint32_t h = 2166136261u;  // FNV-1a 32-bit offset basis
  for (char c : s) {
    h ^= static_cast<uint8_t>(c);
    h *= 16777619u;  // FNV-1a 32-bit prime
  }
  return h;
}

}  // namespace

std::string socketSubdir(std::string_view container_id) {
  std::string prefix;
  for (char c : container_id.substr(0, kPrefixLen)) {
    const bool ok = std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-';
    prefix.push_back(ok ? c : '_');
  }
  char hash[9];
  std::snprintf(hash, sizeof hash, "%08x", fnv1a(container_id));
  return cat(prefix.empty() ? "pod" : prefix, "-", hash);
}

bool isUnder(std::string_view path, std::string_view dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.remove_suffix(1);
  return path.size() > dir.size() + 1 && path.substr(0, dir.size()) == dir && path[dir.size()] == '/' &&
         path.find("/../") == std::string_view::npos;
}

}  // namespace sluice::cni
