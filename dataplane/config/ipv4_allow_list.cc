#include "dataplane/config/ipv4_allow_list.h"

#include <absl/strings/ascii.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/str_split.h>

namespace sluice {

absl::StatusOr<Ipv4AllowList> Ipv4AllowList::parse(std::string_view text) {
  Ipv4AllowList list;
  for (absl::string_view part : absl::StrSplit(absl::string_view(text.data(), text.size()), ',', absl::SkipWhitespace())) {
    const absl::string_view cidr_text = absl::StripAsciiWhitespace(part);
    std::optional<Ipv4Cidr> cidr = Ipv4Cidr::parse(std::string_view(cidr_text.data(), cidr_text.size()));
    if (!cidr)
      return absl::InvalidArgumentError(
          absl::StrCat("'", cidr_text, "' is not an IPv4 CIDR like 10.0.0.0/8 (host bits zero; a single address is /32)"));
    list.networks_.push_back(*cidr);
  }
  return list;
}

bool Ipv4AllowList::allows(std::string_view peer) const {
  if (networks_.empty()) return true;
  const std::optional<Ipv4Address> address = Ipv4Address::parse(peer);
  if (!address) return false;
  for (const Ipv4Cidr& network : networks_)
    if (network.contains(*address)) return true;
  return false;
}

std::string Ipv4AllowList::civetwebAcl() const {
  if (networks_.empty()) return "";
  std::string acl = "-0.0.0.0/0";
  for (const Ipv4Cidr& network : networks_) absl::StrAppend(&acl, ",+", network.toString());
  return acl;
}

}  // namespace sluice
