// The node's own addresses that pods may reach through the exception path
// to its kernel (config key host-addresses; host_path.h): at most one per
// family, the address the node's kernel sends from toward the pods (sluiced
// routes the pod CIDRs to the host interface with it as preferred source)
// and the only source the host interface may send from besides the
// interface's IPv6 link-local address. Given as a list ("a,b" on the
// command line, a JSON array or that text in a file).
#pragma once

#include <optional>
#include <string>

#include "common/net_address.h"

namespace sluice {

struct HostAddresses {
  std::optional<Ipv4Address> v4;
  std::optional<Ipv6Address> v6;

  bool empty() const { return !v4 && !v6; }
  // As the key is given: "v4,v6", either alone, or empty.
  std::string toString() const {
    std::string s = v4 ? v4->toString() : std::string();
    if (v6) s += (s.empty() ? "" : ",") + v6->toString();
    return s;
  }
  bool operator==(const HostAddresses&) const = default;
};

}  // namespace sluice
