// Prefixes routed to a local pod's port (a UPF's UE address pools, a router
// pod's subnets), IPv4 and IPv6: destination prefix -> port, and for source
// validation which prefixes a port may send from.
//
// Built whole by the control path with every port change and immutable
// after, shared by the translations control runs and those a PMD runs for a
// miss (flow_translate.cc), as the forwarding tables are. Read only by
// translations, once per megaflow, never per packet: the cached decision
// carries the result, so a node whose ports own no prefix pays nothing per
// packet. Linear scans, longest prefix first: a node holds a few prefixes.
// The control path refuses overlapping prefixes, so at most one holds a
// destination; the order only makes that explicit.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <vector>

namespace sluice {

struct RoutedPrefix {
  uint32_t net_be = 0;   // network order, host bits zero
  uint32_t mask_be = 0;  // network order
  uint16_t port_no = 0;  // the owning pod's port

  bool contains(uint32_t addr_be) const { return (addr_be & mask_be) == net_be; }
};

struct RoutedPrefix6 {
  std::array<uint8_t, 16> net{};  // network order, host bits zero
  uint8_t prefix_len = 0;         // 0..128
  uint16_t port_no = 0;

  bool contains(const uint8_t* addr) const {
    uint32_t bits = prefix_len;
    for (uint32_t i = 0; bits != 0; ++i) {
      const uint32_t take = bits >= 8 ? 8 : bits;
      const auto mask = static_cast<uint8_t>(0xff00u >> take);
      if (((addr[i] ^ net[i]) & mask) != 0) return false;
      bits -= take;
    }
    return true;
  }
};

class RoutedPrefixTable {
 public:
  RoutedPrefixTable() = default;
  // Prefixes of either family in any order (kept longest first).
  RoutedPrefixTable(std::vector<RoutedPrefix> v4, std::vector<RoutedPrefix6> v6) : v4_(std::move(v4)), v6_(std::move(v6)) {
    std::stable_sort(v4_.begin(), v4_.end(), [](const RoutedPrefix& a, const RoutedPrefix& b) {
      return std::popcount(a.mask_be) > std::popcount(b.mask_be);
    });
    std::stable_sort(v6_.begin(), v6_.end(),
                     [](const RoutedPrefix6& a, const RoutedPrefix6& b) { return a.prefix_len > b.prefix_len; });
  }

  // The longest prefix holding the destination; null if none.
  const RoutedPrefix* longestMatch(uint32_t dst_be) const {
    for (const RoutedPrefix& p : v4_)
      if (p.contains(dst_be)) return &p;
    return nullptr;
  }
  const RoutedPrefix6* longestMatch6(const uint8_t* dst) const {
    for (const RoutedPrefix6& p : v6_)
      if (p.contains(dst)) return &p;
    return nullptr;
  }
  // Every prefix, longest first (translations size their masks from them,
  // and source validation filters a port's own).
  const std::vector<RoutedPrefix>& v4() const { return v4_; }
  const std::vector<RoutedPrefix6>& v6() const { return v6_; }
  bool empty() const { return v4_.empty() && v6_.empty(); }

 private:
  std::vector<RoutedPrefix> v4_;
  std::vector<RoutedPrefix6> v6_;
};

}  // namespace sluice
