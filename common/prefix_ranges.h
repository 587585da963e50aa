// Which routed prefixes a node may own: the ranges the cluster's
// administrator allows (a list of CIDRs, both families) and the special
// ranges no pod may ever attract (loopback, link-local, multicast, ...). The
// same rules are applied by sluice-cni (its node config), sluiced (its
// routed-prefix-ranges key, at AddPort and restore) and the node controller
// (before it routes another node's claims), so that each refuses alone what
// the others refuse. Pure; any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/net_address.h"

namespace sluice {

// A set of CIDRs of both families, in the order given.
struct PrefixRanges {
  std::vector<Ipv4Cidr> v4;
  std::vector<Ipv6Cidr> v6;

  bool empty() const { return v4.empty() && v6.empty(); }
  // Whether one range holds all of `prefix` (the prefix is no wider than
  // the range and starts inside it).
  bool holds(const Ipv4Cidr& prefix) const;
  bool holds(const Ipv6Cidr& prefix) const;
  // The first range that shares an address with `prefix`, if any.
  std::optional<Ipv4Cidr> overlapping(const Ipv4Cidr& prefix) const;
  std::optional<Ipv6Cidr> overlapping(const Ipv6Cidr& prefix) const;
  // "a,b,...", as a comma list gives it (empty for none).
  std::string toString() const;
  bool operator==(const PrefixRanges&) const = default;
};

// The most ranges a list may hold: an allow-list of a few blocks per
// family is what a cluster needs; each AddPort compares every prefix with
// every range.
inline constexpr size_t kMaxPrefixRanges = 64;

// A comma-separated list of CIDRs (host bits zero; blanks around entries
// ignored). InvalidArgument naming the bad entry, a duplicate, or more than
// kMaxPrefixRanges.
absl::StatusOr<PrefixRanges> parsePrefixRanges(std::string_view comma_list);
// The same from separate entries (a JSON array's strings).
absl::StatusOr<PrefixRanges> parsePrefixRanges(const std::vector<std::string>& entries);

// The special range `prefix` overlaps and why no pod may own it, e.g.
// "169.254.0.0/16 (link-local, cloud metadata)"; nullopt when it overlaps
// none. IPv4: 0/8, 127/8, 169.254/16, 224/4, 240/4 (which holds
// 255.255.255.255). IPv6: ::/128, ::1/128, ::ffff:0:0/96, fe80::/10, ff00::/8.
std::optional<std::string> specialRangeOf(const Ipv4Cidr& prefix);
std::optional<std::string> specialRangeOf(const Ipv6Cidr& prefix);

}  // namespace sluice
