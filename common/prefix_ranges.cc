// See prefix_ranges.h.
#include "common/prefix_ranges.h"

#include <absl/strings/ascii.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/str_split.h>

#include <algorithm>

#include "common/cidr_overlap.h"

namespace sluice {
namespace {

struct SpecialRange {
  const char* cidr;
  const char* why;
};

// RFC 6890's ranges a unicast route to a pod must never cover: a pod owning
// them would receive other pods' loopback, link-local (cloud metadata at
// 169.254.169.254), multicast or broadcast traffic.
constexpr SpecialRange kSpecialRange[] = {
    {"0.0.0.0/8", "this network"},
    {"127.0.0.0/8", "loopback"},
    {"169.254.0.0/16", "link-local, cloud metadata"},
    {"224.0.0.0/4", "multicast"},
    {"240.0.0.0/4", "reserved, holds the broadcast address 255.255.255.255"},
};
constexpr SpecialRange kSpecial6[] = {
    {"::/128", "unspecified"},
    {"::1/128", "loopback"},
    {"::ffff:0:0/96", "IPv4-mapped"},
    {"fe80::/10", "link-local"},
    {"ff00::/8", "multicast"},
};

}  // namespace

bool PrefixRanges::holds(const Ipv4Cidr& prefix) const {
  return std::any_of(v4.begin(), v4.end(), [&](const Ipv4Cidr& r) {
    return r.prefix_len <= prefix.prefix_len && r.contains(prefix.network);
  });
}

bool PrefixRanges::holds(const Ipv6Cidr& prefix) const {
  return std::any_of(v6.begin(), v6.end(), [&](const Ipv6Cidr& r) {
    return r.prefix_len <= prefix.prefix_len && r.contains(prefix.network);
  });
}

std::optional<Ipv4Cidr> PrefixRanges::overlapping(const Ipv4Cidr& prefix) const {
  for (const Ipv4Cidr& r : v4)
    if (cidrsOverlap(r, prefix)) return r;
  return std::nullopt;
}

std::optional<Ipv6Cidr> PrefixRanges::overlapping(const Ipv6Cidr& prefix) const {
  for (const Ipv6Cidr& r : v6)
    if (cidrsOverlap(r, prefix)) return r;
  return std::nullopt;
}

std::string PrefixRanges::toString() const {
  std::string out;
  for (const Ipv4Cidr& c : v4) absl::StrAppend(&out, out.empty() ? "" : ",", c.toString());
  for (const Ipv6Cidr& c : v6) absl::StrAppend(&out, out.empty() ? "" : ",", c.toString());
  return out;
}

absl::StatusOr<PrefixRanges> parsePrefixRanges(const std::vector<std::string>& entries) {
  if (entries.size() > kMaxPrefixRanges)
    return absl::InvalidArgumentError(
        absl::StrCat(entries.size(), " ranges given; at most ", kMaxPrefixRanges));
  PrefixRanges out;
  for (const std::string& entry : entries) {
    const absl::string_view stripped = absl::StripAsciiWhitespace(entry);
    const std::string_view text(stripped.data(), stripped.size());
    if (auto v4 = Ipv4Cidr::parse(text)) {
      if (std::find(out.v4.begin(), out.v4.end(), *v4) != out.v4.end())
        return absl::InvalidArgumentError(absl::StrCat(v4->toString(), " is listed twice"));
      out.v4.push_back(*v4);
    } else if (auto v6 = Ipv6Cidr::parse(text)) {
      if (std::find(out.v6.begin(), out.v6.end(), *v6) != out.v6.end())
        return absl::InvalidArgumentError(absl::StrCat(v6->toString(), " is listed twice"));
      out.v6.push_back(*v6);
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "'", stripped, "' is not an IPv4 or IPv6 CIDR with host bits zero (like 10.100.0.0/16 or fd00:100::/48)"));
    }
  }
  return out;
}

absl::StatusOr<PrefixRanges> parsePrefixRanges(std::string_view comma_list) {
  std::vector<std::string> entries =
      absl::StrSplit(absl::string_view(comma_list.data(), comma_list.size()), ',', absl::SkipWhitespace());
  return parsePrefixRanges(entries);
}

std::optional<std::string> specialRangeOf(const Ipv4Cidr& prefix) {
  for (const SpecialRange& s : kSpecialRange) {
    const Ipv4Cidr range = *Ipv4Cidr::parse(s.cidr);
    if (cidrsOverlap(range, prefix)) return absl::StrCat(s.cidr, " (", s.why, ")");
  }
  return std::nullopt;
}

std::optional<std::string> specialRangeOf(const Ipv6Cidr& prefix) {
  for (const SpecialRange& s : kSpecial6) {
    const Ipv6Cidr range = *Ipv6Cidr::parse(s.cidr);
    if (cidrsOverlap(range, prefix)) return absl::StrCat(s.cidr, " (", s.why, ")");
  }
  return std::nullopt;
}

}  // namespace sluice
