// See routed_prefix_policy.h.
#include "dataplane/core/routed_prefix_policy.h"

#include <absl/strings/str_cat.h>

#include <string>

#include "common/prefix_ranges.h"

namespace sluice {
namespace {

absl::Status refused(const std::string& prefix, const std::string& why) {
  return absl::FailedPreconditionError(absl::StrCat("routed_prefixes: ", prefix, " ", why));
}

std::string outsideRanges(const SluicedConfig& config) {
  if (config.routed_prefix_ranges.empty())
    return "is not allowed: routed-prefix-ranges is empty, so this node accepts no routed prefixes";
  return absl::StrCat("is outside routed-prefix-ranges (", config.routed_prefix_ranges.toString(), ")");
}

}  // namespace

absl::Status checkRoutedPrefixPolicy(const SluicedConfig& config, const std::vector<Ipv4Cidr>& v4,
                                     const std::vector<Ipv6Cidr>& v6) {
  // The special ranges first: no allow-list can admit them, and the reason
  // given should be the one that never changes.
  for (const Ipv4Cidr& c : v4) {
    const std::string text = c.toString();
    if (std::optional<std::string> special = specialRangeOf(c)) return refused(text, "overlaps " + *special);
    if (std::optional<Ipv4Cidr> s = config.service_cidrs.overlapping(c))
      return refused(text, absl::StrCat("overlaps the service CIDR ", s->toString(), " (service-cidr)"));
    if (config.host_addresses.v4 && c.contains(*config.host_addresses.v4))
      return refused(text, absl::StrCat("holds the node's host address ", config.host_addresses.v4->toString()));
    if (config.external_gateway && c.contains(*config.external_gateway))
      return refused(text, absl::StrCat("holds the external gateway ", config.external_gateway->toString()));
    if (!config.routed_prefix_ranges.holds(c)) return refused(text, outsideRanges(config));
  }
  for (const Ipv6Cidr& c : v6) {
    const std::string text = c.toString();
    if (std::optional<std::string> special = specialRangeOf(c)) return refused(text, "overlaps " + *special);
    if (std::optional<Ipv6Cidr> s = config.service_cidrs.overlapping(c))
      return refused(text, absl::StrCat("overlaps the service CIDR ", s->toString(), " (service-cidr)"));
    if (config.host_addresses.v6 && c.contains(*config.host_addresses.v6))
      return refused(text, absl::StrCat("holds the node's host address ", config.host_addresses.v6->toString()));
    if (!config.routed_prefix_ranges.holds(c)) return refused(text, outsideRanges(config));
  }
  return absl::OkStatus();
}

}  // namespace sluice
