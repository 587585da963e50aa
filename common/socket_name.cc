#include "common/socket_name.h"

#include <cctype>
#include <cstdint>

#include "absl/strings/str_cat.h"

namespace sluice {
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

std::string ifnameFileComponent(const std::string& ifname) {
  std::string out;
  for (size_t i = 0; i < ifname.size(); ++i) {
    const char c = ifname[i];
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                       c == '-' || (c == '.' && i > 0);
    if (plain) {
      out.push_back(c);
    } else {
      absl::StrAppend(&out, "%", absl::Hex(static_cast<unsigned char>(c), absl::kZeroPad2));
    }
  }
  return out;
}

std::string podSocketSubdir(std::string_view container_id) {
  std::string prefix;
  for (char c : container_id.substr(0, kPrefixLen)) {
    const bool ok = std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-';
    prefix.push_back(ok ? c : '_');
  }
  return absl::StrCat(prefix.empty() ? "pod" : prefix, "-", absl::Hex(fnv1a(container_id), absl::kZeroPad8));
}

std::string podSocketLinkName(std::string_view container_id, std::string_view ifname) {
  // '/' occurs in neither (both validated), so the pair is unambiguous; the
  // readable prefix is the container id's, the hash covers both.
  std::string pair(container_id);
  pair.append("/").append(ifname);
  return podSocketSubdir(pair);
}

}  // namespace sluice
