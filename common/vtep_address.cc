#include "common/vtep_address.h"

#include <array>
#include <cstdint>

namespace sluice {
namespace {

// An IPv4 range, its first address and prefix length (IANA's special-purpose
// registry, RFC 6890).
struct Range4 {
  uint32_t first;
  uint8_t prefix_len;
  const char* what;
};

constexpr std::array<Range4, 5> kNoVtep4 = {{
    {0x00000000, 8, "unspecified (0.0.0.0/8, 'this network')"},
    {0x7f000000, 8, "loopback (127.0.0.0/8)"},
    {0xa9fe0000, 16, "link-local (169.254.0.0/16, where cloud metadata services answer)"},
    {0xe0000000, 4, "multicast (224.0.0.0/4)"},
    // 255.255.255.255, the limited broadcast, is the last of these.
    {0xf0000000, 4, "reserved or broadcast (240.0.0.0/4)"},
}};

bool inRange(uint32_t value, const Range4& r) {
  const uint32_t mask = r.prefix_len == 0 ? 0 : ~0u << (32 - r.prefix_len);
  return (value & mask) == r.first;
}

}  // namespace

std::optional<std::string> vtepAddressClassProblem(const Ipv4Address& vtep) {
  for (const Range4& r : kNoVtep4)
    if (inRange(vtep.value, r)) return std::string(r.what);
  return std::nullopt;
}

std::optional<std::string> vtepAddressClassProblem(const Ipv6Address& vtep) {
  if (vtep.isZero()) return "unspecified (::)";
  Ipv6Address loopback;
  loopback.bytes[15] = 1;
  if (vtep == loopback) return "loopback (::1)";
  if (vtep.isMulticast()) return "multicast (ff00::/8)";
  if (vtep.isLinkLocal()) return "link-local (fe80::/10, which needs a zone)";
  // ::ffff:0:0/96: an IPv4 address written as IPv6, no IPv6 underlay's.
  bool mapped = vtep.bytes[10] == 0xff && vtep.bytes[11] == 0xff;
  for (int i = 0; i < 10 && mapped; ++i) mapped = vtep.bytes[i] == 0;
  if (mapped) return "IPv4-mapped (::ffff:0:0/96)";
  return std::nullopt;
}

}  // namespace sluice
