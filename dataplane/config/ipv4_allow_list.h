// A list of IPv4 networks allowed to reach a listener (the metrics
// endpoint's scrapers): parsed once from its config text, then asked per
// connection from the listener's own threads (read-only after parsing).
#pragma once

#include <absl/status/statusor.h>

#include <string>
#include <string_view>
#include <vector>

#include "common/net_address.h"

namespace sluice {

class Ipv4AllowList {
 public:
  // "10.0.0.0/8, 192.168.1.7/32": comma-separated CIDRs (host bits zero),
  // spaces around each ignored. Empty text: an empty list, which allows
  // everyone. InvalidArgument naming the part that is no IPv4 CIDR.
  static absl::StatusOr<Ipv4AllowList> parse(std::string_view text);

  bool allowsEveryone() const { return networks_.empty(); }
  // Whether `peer` (an address in text form, as a listener reports its
  // client) is in one of the networks. An IPv6 or malformed peer is
  // allowed only when the list allows everyone.
  bool allows(std::string_view peer) const;
  // The list in civetweb's access_control_list syntax: everyone denied,
  // then each network allowed ("-0.0.0.0/0,+10.0.0.0/8"); empty when the
  // list allows everyone.
  std::string civetwebAcl() const;
  const std::vector<Ipv4Cidr>& networks() const { return networks_; }

 private:
  std::vector<Ipv4Cidr> networks_;
};

}  // namespace sluice
